// The Alltoallw rounds with data anywhere, agreed by every process after
// the plan check of a compiled plan: each process knows only the rounds
// where it has a part (its shares, its windows), and every process must
// post every round with data (MPI_Ialltoallw is collective). Rounds
// without data anywhere are never posted, so a sparse access far across
// the file (a filetype whose extent passes 2^31, realms of small
// segments) costs rounds in proportion to its data, not to its extent.
//
// The messages, point to point on the operation's metadata tag, after the
// plan check's (messages of one process on one tag arrive in the order
// sent): to every other process the number of this process's rounds, then
// their indices when there are any. A receiver posts the receive of a
// list once its count is in; the lists are sent with the counts, and
// waited for with the lists' receives (a list large enough to need its
// receive posted never holds up the counts). Two message latencies on a
// compiled Alltoallw plan, none on a reused one; n-1 sends and receives
// of each kind per process.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

namespace flowio::runtime {

// One operation's exchange. Used by one thread at a time; its buffers live
// here until the requests complete.
class LiveRoundExchange {
 public:
  // Posts the counts' receives and this process's count and list to every
  // other process (`mine`: its round indices, ascending). The returned
  // requests are the counts'.
  std::vector<MPI_Request> post(MPI_Comm comm, int tag, int rank, int ranks,
                                std::vector<std::int64_t> mine);
  // Once post()'s requests are complete: the lists' receives, and the
  // lists' sends.
  std::vector<MPI_Request> post_lists();
  // Once those are complete: every round with data anywhere, ascending.
  std::vector<std::int64_t> merged() const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int tag_ = 0;
  std::vector<std::int64_t> mine_;
  std::int64_t my_count_ = 0;
  std::vector<int> peers_;
  std::vector<std::int64_t> counts_;  // by peer
  std::vector<std::vector<std::int64_t>> lists_;
  std::vector<MPI_Request> list_sends_;
};

}  // namespace flowio::runtime
