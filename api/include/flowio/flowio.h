// flowio: asynchronous parallel file I/O for MPI programs. This header
// brings in the whole public API: files, futures and their executors,
// datatypes and transfers, hints and MPI_Info, object sets and remapping.
#pragma once

#include "flowio/data_representation.h"
#include "flowio/datatype.h"
#include "flowio/error.h"
#include "flowio/executor.h"
#include "flowio/file.h"
#include "flowio/future.h"
#include "flowio/hints.h"
#include "flowio/info.h"
#include "flowio/object_file.h"
#include "flowio/object_set.h"
#include "flowio/remap.h"
#include "flowio/statistics.h"
#include "flowio/transfer.h"
#include "flowio/when_all.h"
