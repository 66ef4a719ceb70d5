// Which processes of a communicator this process reaches through shared
// memory: the compression rule never compresses messages to them
// (exchange/compression_rule.h).
#pragma once

#include <mpi.h>

#include <vector>

namespace flowio::exchange {

// Collective over `comm`: by rank of `comm`, whether messages to that
// process are copies through this node's shared memory (same node, and a
// transport that uses shared memory).
std::vector<bool> peers_sharing_memory(MPI_Comm comm);

}  // namespace flowio::exchange
