// Hints travel between MPI_Info objects (what MPI-IO programs pass) and
// flowio::Hints (string pairs with the same names).
#pragma once

#include <mpi.h>

#include "flowio/hints.h"

namespace flowio::mpiio {

// Every key/value of `info` (MPI_INFO_NULL gives none).
Hints hints_from_info(MPI_Info info);

// A new MPI_Info holding `hints`; the caller frees it.
MPI_Info info_from_hints(const Hints& hints);

}  // namespace flowio::mpiio
