#include "runtime/access_gather.h"

#include <cstdint>
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
  // Descriptions of any length: counts as MPI_Count, MPI_Allgatherv_c.
  const auto count = static_cast<MPI_Count>(words.size());
  std::vector<MPI_Count> counts(static_cast<std::size_t>(ranks));
  check_mpi(MPI_Allgather(&count, 1, MPI_COUNT, counts.data(), 1, MPI_COUNT, comm),
            "MPI_Allgather");
  std::vector<MPI_Aint> displacements(static_cast<std::size_t>(ranks));
  MPI_Aint total = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    displacements[static_cast<std::size_t>(rank)] = total;
    total += counts[static_cast<std::size_t>(rank)];
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  check_mpi(MPI_Allgatherv_c(words.data(), count, MPI_INT64_T, all.data(), counts.data(),
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
