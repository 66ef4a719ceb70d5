#include "sync/one_sided_mutex.h"

namespace flowio::sync {

OneSidedMutex::OneSidedMutex(MPI_Comm comm, ProgressPort& progress, int home)
    : WaitlistMutex(comm, progress, home), poll_word_(channel(), 1) {}

// The word is set only by the hand-off that ends this wait (a releaser
// hands off only to a process whose waitlist bit is set), and cleared here
// before the lock is used, so the next wait starts from zero.
void OneSidedMutex::await_hand_off(Done granted) {
  const MPI_Comm comm = channel().comm();
  channel().poll([this, comm, granted = std::move(granted)] {
    // An MPI call, so that MPICH applies the releaser's update here.
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
    poll_word_.sync();
    if (poll_word_.load(0) == 0) return ProgressPort::PollResult::busy;
    poll_word_.store(0, 0);
    granted(nullptr);
    return ProgressPort::PollResult::done;
  });
}

MPI_Request OneSidedMutex::hand_off(int next) {
  return poll_word_.replace(&one_, &old_, 1, next, 0);
}

void OneSidedMutex::close_hand_off() { poll_word_.close(); }

}  // namespace flowio::sync
