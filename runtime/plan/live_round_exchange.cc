#include "runtime/plan/live_round_exchange.h"

#include <algorithm>

#include "flowio/error.h"

namespace flowio::runtime {

std::vector<MPI_Request> LiveRoundExchange::post(MPI_Comm comm, int tag, int rank, int ranks,
                                                 std::vector<std::int64_t> mine) {
  comm_ = comm;
  tag_ = tag;
  mine_ = std::move(mine);
  my_count_ = static_cast<std::int64_t>(mine_.size());
  for (int other = 0; other < ranks; ++other) {
    if (other != rank) peers_.push_back(other);
  }
  counts_.assign(peers_.size(), 0);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * peers_.size());
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    MPI_Request request;
    check_mpi(MPI_Irecv(&counts_[i], 1, MPI_INT64_T, peers_[i], tag, comm, &request), "MPI_Irecv");
    requests.push_back(request);
  }
  for (const int peer : peers_) {
    MPI_Request request;
    check_mpi(MPI_Isend(&my_count_, 1, MPI_INT64_T, peer, tag, comm, &request), "MPI_Isend");
    requests.push_back(request);
    if (mine_.empty()) continue;
    check_mpi(MPI_Isend_c(mine_.data(), static_cast<MPI_Count>(mine_.size()), MPI_INT64_T, peer,
                          tag, comm, &request),
              "MPI_Isend_c");
    list_sends_.push_back(request);
  }
  return requests;
}

std::vector<MPI_Request> LiveRoundExchange::post_lists() {
  std::vector<MPI_Request> requests = std::move(list_sends_);
  lists_.resize(peers_.size());
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (counts_[i] == 0) continue;
    lists_[i].resize(static_cast<std::size_t>(counts_[i]));
    MPI_Request request;
    check_mpi(MPI_Irecv_c(lists_[i].data(), static_cast<MPI_Count>(counts_[i]), MPI_INT64_T,
                          peers_[i], tag_, comm_, &request),
              "MPI_Irecv_c");
    requests.push_back(request);
  }
  return requests;
}

std::vector<std::int64_t> LiveRoundExchange::merged() const {
  std::vector<std::int64_t> all = mine_;
  for (const std::vector<std::int64_t>& list : lists_) {
    const auto middle = static_cast<std::ptrdiff_t>(all.size());
    all.insert(all.end(), list.begin(), list.end());
    std::inplace_merge(all.begin(), all.begin() + middle, all.end());
  }
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace flowio::runtime
