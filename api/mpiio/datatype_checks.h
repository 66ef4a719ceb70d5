// Datatype checks MPI-IO makes at the call and flowio's C++ API leaves to
// MPI: a datatype handed to a data call must be committed.
#pragma once

#include <mpi.h>

namespace flowio::mpiio {

// Throws UsageError(invalid_datatype) naming `role` ("datatype", "etype",
// "filetype") when `type` is MPI_DATATYPE_NULL or not committed.
void require_committed(MPI_Datatype type, const char* role);

}  // namespace flowio::mpiio
