// The check MPI requires of every datatype handed to a data call or a view,
// and MPI itself offers no query for: that it is committed (and not freed).
#pragma once

#include <mpi.h>

namespace flowio::core {

// Throws UsageError(invalid_datatype) naming `role` ("the datatype", "the
// etype", ...) when `type` is MPI_DATATYPE_NULL, not committed, or a
// handle MPICH shows as freed (on its free list), whatever the type's
// size. A freed handle that MPI has already given to a new type is that
// new type, and the last handle of MPICH's free list reads as a type of
// size 0: no check can tell. Thread-safe.
void require_committed(MPI_Datatype type, const char* role);

}  // namespace flowio::core
