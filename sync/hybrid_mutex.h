// HybridMutex: the seed paper's hybrid algorithm. The waitlist is updated
// with one-sided operations (waitlist_mutex.h); the hand-off is a
// zero-byte message that the next holder's progress thread receives, so a
// waiting process burns no CPU on the lock (the paper's point against
// polling, which matters most on oversubscribed nodes).
#pragma once

#include "sync/waitlist_mutex.h"

namespace flowio::sync {

class HybridMutex final : public WaitlistMutex {
 public:
  // Collective over `comm`; the waitlist lives on `home`.
  HybridMutex(MPI_Comm comm, ProgressPort& progress, int home);
  std::string name() const override { return "hybrid"; }

 private:
  void await_hand_off(Done granted) override;
  MPI_Request hand_off(int next) override;
};

}  // namespace flowio::sync
