#include "sync/waitlist_mutex.h"

#include <string>

#include "flowio/error.h"
#include "sync/waitlist.h"

namespace flowio::sync {
namespace {

// `comm`, once it is known to fit in the waitlist word.
MPI_Comm fitting_waitlist(MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  if (ranks > kWaitlistMaxProcesses) {
    throw UsageError(ErrorCode::unsupported, "the one-sided and hybrid locks serve at most " +
                                                 std::to_string(kWaitlistMaxProcesses) +
                                                 " processes, not " + std::to_string(ranks) +
                                                 " (use flowio_lock=mcs)");
  }
  return comm;
}

}  // namespace

WaitlistMutex::WaitlistMutex(MPI_Comm comm, ProgressPort& progress, int home)
    : channel_(fitting_waitlist(comm), progress),
      home_(home),
      waitlist_(channel_, channel_.rank() == home ? 1 : 0) {
  if (channel_.rank() == home_ && waitlist_.remote()) {
    home_poll_ = std::make_unique<HomePoll>(progress, channel_.comm(), waitlist_, 1);
  }
}

void WaitlistMutex::acquire(Done granted) {
  const std::uint64_t mine = waitlist_bit(channel_.rank());
  operand_ = mine;
  MPI_Request request = waitlist_.fetch_and_op(&operand_, &result_, home_, 0, MPI_BOR);
  channel_.watch_or_test({request}, [this, mine, granted = std::move(granted)](int code) {
    if (code != MPI_SUCCESS) {
      granted(mpi_failure(code, "lock: fetch-and-or of the waitlist"));
    } else if ((result_ & ~mine) == 0) {
      granted(nullptr);
    } else {
      await_hand_off(granted);
    }
  });
}

void WaitlistMutex::release(Done released) {
  const std::uint64_t mine = waitlist_bit(channel_.rank());
  operand_ = ~mine;
  MPI_Request request = waitlist_.fetch_and_op(&operand_, &result_, home_, 0, MPI_BAND);
  channel_.watch_or_test({request}, [this, mine, released = std::move(released)](int code) {
    if (code != MPI_SUCCESS) {
      released(mpi_failure(code, "unlock: fetch-and-and of the waitlist"));
      return;
    }
    const int next = next_waiter(result_ & ~mine, channel_.rank(), channel_.size());
    if (next < 0) {
      released(nullptr);
      return;
    }
    channel_.watch_or_test({hand_off(next)}, [released](int sent) {
      released(mpi_failure(sent, "unlock: hand-off to the next waiter"));
    });
  });
}

void WaitlistMutex::close() {
  channel_.quiesce();
  if (home_poll_) home_poll_->stop();
  close_hand_off();
  waitlist_.close();
}

}  // namespace flowio::sync
