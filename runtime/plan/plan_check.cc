#include "runtime/plan/plan_check.h"

#include "flowio/error.h"

namespace flowio::runtime {
namespace {

// A notice is 1 byte (made) or none (not made); anything longer is a
// description that came first.
constexpr int kNoticeBytes = 1;

MPI_Count received_bytes(const MPI_Status& status) {
  MPI_Count bytes = 0;
  MPI_Get_count_c(&status, MPI_BYTE, &bytes);
  return bytes;
}

}  // namespace

std::vector<MPI_Request> PlanCheck::post(MPI_Comm comm, int tag, int rank, bool made,
                                         std::span<const Peer> peers) {
  comm_ = comm;
  tag_ = tag;
  made_ = made;
  const int ranks = static_cast<int>(peers.size());
  for (int other = 0; other < ranks; ++other) {
    if (other == rank) continue;
    const Peer& peer = peers[static_cast<std::size_t>(other)];
    if (peer.failed) {
      anyone_failed_ = true;
      continue;
    }
    from_.push_back(other);
    rooms_.emplace_back(std::max<std::size_t>(peer.room, kNoticeBytes));
  }
  std::vector<MPI_Request> requests;
  requests.reserve(from_.size() + static_cast<std::size_t>(ranks));
  for (std::size_t i = 0; i < from_.size(); ++i) {
    MPI_Request request;
    // A room holds a description that may come first: of any length.
    check_mpi(MPI_Irecv_c(rooms_[i].data(), static_cast<MPI_Count>(rooms_[i].size()), MPI_BYTE,
                          from_[i], tag, comm, &request),
              "MPI_Irecv_c");
    requests.push_back(request);
  }
  for (int other = 0; other < ranks; ++other) {
    if (other == rank) continue;
    MPI_Request request;
    check_mpi(MPI_Isend(&notice_, made ? kNoticeBytes : 0, MPI_BYTE, other, tag, comm, &request),
              "MPI_Isend");
    requests.push_back(request);
  }
  return requests;
}

std::vector<MPI_Request> PlanCheck::after_first(std::span<const MPI_Status> statuses) {
  std::vector<MPI_Request> requests;
  for (std::size_t i = 0; i < from_.size() && i < statuses.size(); ++i) {
    const MPI_Count bytes = received_bytes(statuses[i]);
    if (bytes == 0) anyone_failed_ = true;
    if (bytes > kNoticeBytes) second_from_.push_back(from_[i]);
  }
  rooms_.clear();
  second_notices_.resize(second_from_.size());
  for (std::size_t i = 0; i < second_from_.size(); ++i) {
    MPI_Request request;
    check_mpi(MPI_Irecv(&second_notices_[i], kNoticeBytes, MPI_BYTE, second_from_[i], tag_, comm_,
                        &request),
              "MPI_Irecv");
    requests.push_back(request);
  }
  return requests;
}

bool PlanCheck::everyone_made(std::span<const MPI_Status> statuses) const {
  if (!made_ || anyone_failed_) return false;
  for (std::size_t i = 0; i < second_from_.size() && i < statuses.size(); ++i) {
    if (received_bytes(statuses[i]) == 0) return false;
  }
  return true;
}

}  // namespace flowio::runtime
