#include "runtime/access_gather.h"

#include <cstdint>
#include <limits>
#include <span>

#include "exchange/access_codec.h"
#include "flowio/error.h"

namespace flowio::runtime {

std::vector<core::Access> allgather_accesses(MPI_Comm comm, const core::Access& mine) {
  int ranks = 0;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  const std::vector<std::int64_t> words = mine.view() || mine.empty()
                                              ? exchange::encode_view_access(mine)
                                              : exchange::encode_pieces(mine.pieces());
  if (words.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw UsageError(ErrorCode::invalid_argument,
                     "gathering views: an access description of more than 2^31 words");
  }
  const int count = static_cast<int>(words.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks));
  check_mpi(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::vector<MPI_Aint> displacements(static_cast<std::size_t>(ranks));
  MPI_Aint total = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    displacements[static_cast<std::size_t>(rank)] = total;
    total += counts[static_cast<std::size_t>(rank)];
  }
  std::vector<MPI_Count> large_counts(counts.begin(), counts.end());
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  check_mpi(MPI_Allgatherv_c(words.data(), count, MPI_INT64_T, all.data(), large_counts.data(),
                             displacements.data(), MPI_INT64_T, comm),
            "MPI_Allgatherv_c");
  std::vector<core::Access> accesses;
  accesses.reserve(static_cast<std::size_t>(ranks));
  const std::span<const std::int64_t> received(all);
  for (int rank = 0; rank < ranks; ++rank) {
    accesses.push_back(exchange::decode_access(
        received.subspan(static_cast<std::size_t>(displacements[static_cast<std::size_t>(rank)]),
                         static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]))));
  }
  return accesses;
}

}  // namespace flowio::runtime
