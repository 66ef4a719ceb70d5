#include "exchange/peer_locality.h"

#include <cstdlib>
#include <string>

#include "flowio/error.h"

namespace flowio::exchange {
namespace {

// Whether MPI's transport may use shared memory between processes of one
// node: UCX (MPICH's ch4:ucx) does unless UCX_TLS names transports without
// any of its shared-memory ones (as tools/netbed.sh does to force TCP).
bool shared_memory_transport() {
  const char* transports = std::getenv("UCX_TLS");
  if (transports == nullptr || *transports == '\0') return true;
  const std::string names(transports);
  for (const char* memory : {"all", "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem"}) {
    std::size_t at = 0;
    while ((at = names.find(memory, at)) != std::string::npos) {
      const std::size_t end = at + std::char_traits<char>::length(memory);
      const bool starts = at == 0 || names[at - 1] == ',' || names[at - 1] == '^';
      const bool ends = end == names.size() || names[end] == ',';
      if (starts && ends) return names[0] != '^';
      at = end;
    }
  }
  return names[0] == '^';
}

}  // namespace

std::vector<bool> peers_sharing_memory(MPI_Comm comm) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  std::vector<bool> shares(static_cast<std::size_t>(ranks), false);
  MPI_Comm node;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  if (!shared_memory_transport()) {
    MPI_Comm_free(&node);
    return shares;
  }
  MPI_Group node_group, all_group;
  MPI_Comm_group(node, &node_group);
  MPI_Comm_group(comm, &all_group);
  int node_ranks = 0;
  MPI_Group_size(node_group, &node_ranks);
  std::vector<int> local(static_cast<std::size_t>(node_ranks));
  std::vector<int> global(static_cast<std::size_t>(node_ranks));
  for (int i = 0; i < node_ranks; ++i) local[static_cast<std::size_t>(i)] = i;
  MPI_Group_translate_ranks(node_group, node_ranks, local.data(), all_group, global.data());
  for (int rank : global) {
    if (rank >= 0 && rank < ranks) shares[static_cast<std::size_t>(rank)] = true;
  }
  MPI_Group_free(&node_group);
  MPI_Group_free(&all_group);
  MPI_Comm_free(&node);
  return shares;
}

}  // namespace flowio::exchange
