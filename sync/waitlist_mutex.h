// WaitlistMutex: what the seed paper's one-sided and hybrid algorithms
// share. The waitlist (waitlist.h) lives in one word on the home process.
//
//   acquire  one atomic fetch-and-or sets this process's bit and returns
//            the others': none set, and the lock is held (one remote
//            operation when uncontended, as the paper's one access epoch);
//            otherwise wait for the hand-off of the previous holder.
//   release  one atomic fetch-and-and clears the bit and returns the
//            others': if any is set, hand the lock to the first of them
//            after this process in rank order, wrapping (fair: every
//            waiter is served within ranks - 1 hand-offs).
//
// The subclasses differ in the hand-off: a zero-byte message that the
// progress thread receives (HybridMutex), or a byte written into the next
// holder's window that it polls (OneSidedMutex).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "sync/channel.h"
#include "sync/home_poll.h"
#include "sync/lock_window.h"
#include "sync/mutex_protocol.h"
#include "sync/progress_port.h"

namespace flowio::sync {

class WaitlistMutex : public MutexProtocol {
 public:
  void acquire(Done granted) override;
  void release(Done released) override;
  void close() override;

 protected:
  // Collective over `comm`. Throws UsageError for more than 64 processes,
  // MpiError when MPI fails.
  WaitlistMutex(MPI_Comm comm, ProgressPort& progress, int home);

  Channel& channel() { return channel_; }
  // Waits for the previous holder's hand-off, then calls granted.
  virtual void await_hand_off(Done granted) = 0;
  // Starts handing the lock to process `next`; the request completes when
  // the hand-off has left (or landed).
  virtual MPI_Request hand_off(int next) = 0;
  // Frees what the subclass created (collective), after every process
  // stopped using the lock.
  virtual void close_hand_off() {}

 private:
  Channel channel_;
  int home_;
  LockWindow waitlist_;  // one word on the home, none elsewhere
  std::unique_ptr<HomePoll> home_poll_;
  // Operands and results of the one operation in flight (MutexLock runs
  // one step at a time).
  std::uint64_t operand_ = 0;
  std::uint64_t result_ = 0;
};

}  // namespace flowio::sync
