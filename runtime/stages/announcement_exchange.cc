#include "runtime/stages/announcement_exchange.h"

#include <cstddef>

#include "flowio/error.h"

namespace flowio::runtime {

void AnnouncementExchange::receive(std::span<Announcement> all, int rank, MPI_Comm comm, int tag) {
  const int ranks = static_cast<int>(all.size());
  count_ = 0;
  received_ = true;
  if (ranks == 1 || ranks > kMostPointToPointRanks) return;
  constexpr int kBytes = static_cast<int>(sizeof(Announcement));
  for (int from = 0; from < ranks; ++from) {
    if (from == rank) continue;
    check_mpi(MPI_Irecv(&all[static_cast<std::size_t>(from)], kBytes, MPI_BYTE, from, tag, comm,
                        &requests_[count_++]),
              "MPI_Irecv");
  }
}

std::span<MPI_Request> AnnouncementExchange::post(std::span<Announcement> all, int rank,
                                                  MPI_Comm comm, int tag, MPI_Comm gather_comm,
                                                  bool with_quantiles) {
  const int ranks = static_cast<int>(all.size());
  // Receives first, so that most announcements land in place rather than
  // in MPI's unexpected-message queue.
  if (!received_) receive(all, rank, comm, tag);
  received_ = false;
  if (ranks == 1) return {};
  constexpr int kBytes = static_cast<int>(sizeof(Announcement));
  if (ranks > kMostPointToPointRanks) {
    check_mpi(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), kBytes, MPI_BYTE,
                             gather_comm, &requests_[0]),
              "MPI_Iallgather");
    count_ = 1;
    return {requests_.data(), count_};
  }
  // Receives take the whole announcement; a message may be shorter.
  const int sent = with_quantiles ? kBytes : static_cast<int>(kAnnouncementBytesWithoutQuantiles);
  for (int to = 0; to < ranks; ++to) {
    if (to == rank) continue;
    check_mpi(MPI_Isend(&all[static_cast<std::size_t>(rank)], sent, MPI_BYTE, to, tag, comm,
                        &requests_[count_++]),
              "MPI_Isend");
  }
  return {requests_.data(), count_};
}

}  // namespace flowio::runtime
