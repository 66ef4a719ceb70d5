// OneSidedMutex: the seed paper's one-sided algorithm. The waitlist is
// updated with one-sided operations (waitlist_mutex.h), and so is the
// hand-off: the releaser sets a word in the next holder's own window,
// which that process polls.
//
// The polling is the paper's: a waiting process checks its word on every
// pass of its progress thread and keeps the thread passing without rest,
// so it burns a core for as long as it waits (bench/locks measures it).
// Kept to reproduce the paper's comparison; the hybrid and MCS locks do
// not poll.
#pragma once

#include <cstdint>

#include "sync/lock_window.h"
#include "sync/waitlist_mutex.h"

namespace flowio::sync {

class OneSidedMutex final : public WaitlistMutex {
 public:
  // Collective over `comm`; the waitlist lives on `home`.
  OneSidedMutex(MPI_Comm comm, ProgressPort& progress, int home);
  std::string name() const override { return "one_sided"; }

 private:
  void await_hand_off(Done granted) override;
  MPI_Request hand_off(int next) override;
  void close_hand_off() override;

  LockWindow poll_word_;  // one word per process
  const std::uint64_t one_ = 1;
  std::uint64_t old_ = 0;
};

}  // namespace flowio::sync
