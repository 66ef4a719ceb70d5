// flowio: asynchronous parallel file I/O for MPI programs. This header
// brings in the whole public API.
#pragma once

#include "flowio/data_representation.h"
#include "flowio/error.h"
#include "flowio/executor.h"
#include "flowio/file.h"
#include "flowio/future.h"
#include "flowio/hints.h"
#include "flowio/statistics.h"
#include "flowio/when_all.h"
