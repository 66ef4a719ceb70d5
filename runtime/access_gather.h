// Gathering every process's access: each process contributes one
// core::Access (its view with a range of its stream, or a piece list) and
// every process receives all of them, indexed by rank. A view travels as
// its flattened filetype (exchange/access_codec), so the message costs the
// type's distinct nodes and blocks, not its pieces: a subarray tile of a
// million rows is a few dozen words.
#pragma once

#include <mpi.h>

#include <vector>

#include "runtime/core/access.h"

namespace flowio::runtime {

// Collective over `comm` (two allgathers). Returns the accesses of every
// rank, element r being rank r's. Throws MpiError when MPI fails, and
// MpiError on every rank when a received encoding is malformed.
std::vector<core::Access> allgather_accesses(MPI_Comm comm, const core::Access& mine);

}  // namespace flowio::runtime
