// McsMutex: a queue lock in the style of Mellor-Crummey and Scott's MCS
// lock, on MPI-3 atomics: constant window memory per process (one word,
// the queue's tail, on the home process; none elsewhere) and constant
// remote operations per acquire, where the waitlist locks need a bit per
// process.
//
//   acquire  swap this process into the tail (an atomic fetch-and-op with
//            MPI_REPLACE). An empty tail: the lock is held. Otherwise tell
//            the previous tail "I am your successor" (a message carrying
//            this rank) and wait for the hand-off message.
//   release  if the successor's message has arrived, send it the hand-off.
//            Otherwise swap the tail to empty: if it was this process,
//            nobody waits. If not, processes queued behind it meanwhile;
//            swap their tail back. Anyone who came in between the two
//            swaps found the lock free and holds it now (an "usurper"):
//            this process's successors are queued behind the last of them
//            by telling it, as a successor would, who comes next; with no
//            usurper, the successor gets the hand-off.
//
// The release uses two swaps where the textbook MCS lock uses one
// compare-and-swap: MPI_Compare_and_swap has no request-based form, and
// completing it would need MPI_Win_flush, which blocks the calling thread
// inside MPI. The swap-only release is MCS's own variant for machines
// without compare-and-swap. Waiting for the successor's message and for
// the hand-off is done by the progress thread: no process polls.
// Fairness: first come, first served, except that usurpers (processes that
// arrive within the two swaps of a release) go before those queued.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "sync/channel.h"
#include "sync/home_poll.h"
#include "sync/lock_window.h"
#include "sync/mutex_protocol.h"

namespace flowio::sync {

class McsMutex final : public MutexProtocol {
 public:
  // Collective over `comm`; the tail lives on `home`.
  McsMutex(MPI_Comm comm, ProgressPort& progress, int home);
  void acquire(Done granted) override;
  void release(Done released) override;
  void close() override;
  std::string name() const override { return "mcs"; }

 private:
  // Receives the successor's rank (a successor's own message or one
  // forwarded by a releaser), then hands it the lock or, with an usurper,
  // queues it behind the usurper.
  void pass_to_successor(Done released);
  // Sends to the successor once `request`, the receive of its rank into
  // successor_, completes; `posted` is what posting it returned (`posting`
  // names the call in the error when it failed).
  void await_successor(int posted, const char* posting, MPI_Request request, Done released);
  void send_to_successor(Done released);
  // A watch's completion for a step of the release (`what` names it):
  // hands its failure to `released`, or goes on with `next(released)`.
  std::function<void(int)> then_unless_failed(const char* what, void (McsMutex::*next)(Done),
                                              Done released);
  std::uint64_t tail_value() const { return static_cast<std::uint64_t>(channel_.rank()) + 1; }

  Channel channel_;
  int home_;
  LockWindow tail_;  // one word on the home: 0 empty, else rank + 1
  std::unique_ptr<HomePoll> home_poll_;
  // The one step in flight (MutexLock runs one at a time).
  std::uint64_t operand_ = 0;
  std::uint64_t result_ = 0;
  std::uint64_t queued_tail_ = 0;  // the tail found by the emptying swap
  std::uint64_t usurper_ = 0;      // the tail found by the swap back
  int successor_ = -1;
  int link_ = 0;  // payload of an outgoing "your successor is" message
};

}  // namespace flowio::sync
