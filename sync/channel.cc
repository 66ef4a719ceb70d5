#include "sync/channel.h"

#include <memory>

#include "flowio/error.h"
#include "flowio/future.h"

namespace flowio::sync {

Channel::Channel(MPI_Comm comm, ProgressPort& progress) : progress_(progress) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup for a lock");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Channel::~Channel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

void Channel::watch(std::vector<MPI_Request> requests, std::function<void(int)> done) {
  {
    std::lock_guard lock(mutex_);
    ++in_flight_;
  }
  progress_.watch(std::move(requests),
                  [this, done = std::move(done)](int code, std::span<const MPI_Status>) {
                    done(code);
                    finished();
                  });
}

void Channel::poll(ProgressPort::Poll poll) {
  {
    std::lock_guard lock(mutex_);
    ++in_flight_;
  }
  progress_.poll([this, poll = std::move(poll)] {
    const ProgressPort::PollResult result = poll();
    if (result == ProgressPort::PollResult::done) finished();
    return result;
  });
}

// The last touch of this Channel by a callback: quiesce() may return (and
// the channel be destroyed) as soon as the count reaches zero.
void Channel::finished() {
  std::lock_guard lock(mutex_);
  if (--in_flight_ == 0) quiet_.notify_all();
}

void Channel::quiesce() {
  {
    std::unique_lock lock(mutex_);
    quiet_.wait(lock, [this] { return in_flight_ == 0; });
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &barrier), "MPI_Ibarrier closing a lock");
  auto outcome = std::make_shared<Promise<int>>();
  Future<int> reached = outcome->get_future();
  progress_.watch({barrier},
                  [outcome](int code, std::span<const MPI_Status>) { outcome->set_value(code); });
  check_mpi(reached.get(), "MPI_Ibarrier closing a lock");
}

}  // namespace flowio::sync
