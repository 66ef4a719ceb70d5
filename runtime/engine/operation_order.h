// OperationOrder: the one owner of the order of a file's collective
// operations on this process. Everything that orders them lives here:
// their sequence number, the message tags derived from it, the start of
// their data phases, and the rules by which operations in flight wait for
// each other. Every other part of the engine follows from these.
//
// The sequence number. Every operation takes one at its call (begin(), on
// the caller's thread, in call order), so every process gives the same
// collective call the same number. It is
//   - the operation part of its message tags (message_tags.h);
//   - its place in the control pipeline, which operations enter at their
//     call, in that order, and whose stages pass them one at a time in that
//     order (engine/pipelines.h): the plan cache is consulted and filled
//     there, so every process sees the same cache for the same call;
//   - its turn to start its data phase (data_phase_ready()).
//
// Tags. A tag keeps kSequenceBits of the sequence number, so operations
// kSequencesApart apart share tags. Two such operations are never live on
// one process at once: begin() waits, at the call, for the operation
// kSequencesApart earlier to end. Then each process sends and receives the
// messages of every (peer, tag) pair in operation order, and MPI's
// non-overtaking rule pairs each message with the receive of its own
// operation, whatever stages of different operations run at once (a later
// operation's metadata stage may post its receives while an earlier one is
// in its plan check).
//
// Data phases start in call order, each as soon as every earlier operation
// it could interfere with has ended: two operations interfere when one
// writes and their file extents (from the first to the last byte any
// process accesses, which contains every sieving window) intersect, so that
// data sieving never races with another operation's writes; and when both
// exchange by Alltoallw (collective calls, which every process must post in
// one order). Others run side by side.
//
// Why operations in flight cannot deadlock. Every wait of an operation is
// for messages of the same operation from processes that run the same
// stage for it, or for an earlier operation (begin()'s tag wait, a data
// phase waiting for an interfering one). Control stages pass operations in
// call order on every process. Data phases start in call order on every
// process, and each enqueues its items in plan order into pipelines whose
// limiters (buffers in flight) admit items in the order they came; an item
// waits only for the items of its own operation and window on its
// partners. Take the earliest unfinished item over all processes, ordered
// by (sequence, plan order): every item ahead of it in its pipeline's queue
// is earlier, hence finished, so it is admitted; the items it waits for
// are, by the same argument, admitted on their processes; so it finishes.
// The same induction on sequence numbers shows that the operation a call
// waits for in begin() and the earlier operation a data phase waits for
// both end without anything later.
//
// Invariants, asserted in debug and sanitizer builds: numbers are taken in
// order by one thread at a time; each operation's data phase is ready
// once, and it ends once, after that.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/engine/message_tags.h"

namespace flowio::runtime {

// What an operation's data phase may touch. An operation without a data
// phase (its data moved already, or it failed everywhere) has an empty
// extent and interferes with nothing.
struct DataFootprint {
  bool writing = false;
  bool alltoallw = false;
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Thread safety: begin() is called by one thread at a time (the file's
// caller); the other methods from any thread.
class OperationOrder {
 public:
  struct Turn {
    std::uint64_t sequence;
    // Nothing else is live on the file: a blocking call may run on the
    // caller's thread (inline), and stays alone until it returns, since
    // only the caller begins operations.
    bool alone;
  };

  // The next operation's turn. Blocks while the operation that holds the
  // same tag bits (kSequencesApart earlier) is live; that one runs in the
  // background and ends without this thread.
  Turn begin();
  // Operation `sequence` is ready for its data phase: `start` runs once it
  // may (on this thread, or on the thread of the end() that lets it).
  // Called once per operation, also for those without a data phase (with
  // an empty footprint: they never wait for it).
  void data_phase_ready(std::uint64_t sequence, DataFootprint footprint,
                        std::function<void()> start);
  // Operation `sequence` is over here: its outcome is known on every
  // process and nothing of it is in flight on this one. Its footprint no
  // longer holds back others, its tag bits are free.
  void end(std::uint64_t sequence);
  // The same two steps for an operation that was alone at its turn and
  // runs on the caller's thread: no other operation is live, and none
  // begins until it returns (only the caller begins them), so its data
  // phase starts at once and it ends without the lock; nothing else can
  // wait for it.
  void data_phase_alone(std::uint64_t sequence);
  void end_alone(std::uint64_t sequence);
  // An operation that could not start (begin() was called, nothing was
  // posted): takes its turn without a data phase and ends.
  void abandon(std::uint64_t sequence);
  // No operation is live (begun and not ended).
  bool idle() const { return live_.load(std::memory_order_acquire) == 0; }
  // Exactly one operation is live (the caller's, asking).
  bool only_one_live() const { return live_.load(std::memory_order_acquire) == 1; }

 private:
  struct Waiting {
    DataFootprint footprint;
    std::function<void()> start;
  };
  bool interferes(const DataFootprint& footprint) const;
  void start_what_may();

  std::uint64_t next_sequence_ = 0;  // begin()'s thread only
  // By tag bits: whether the operation holding them is live. Acquire in
  // begin() pairs with end()'s release: the new operation's messages are
  // posted after everything the old one did.
  std::array<std::atomic<bool>, kSequencesApart> tags_live_{};
  // Operations begun and not ended. Acquire in begin(): an operation that
  // finds none live sees everything the earlier ones did before they
  // ended, as if it had taken a lock they released.
  std::atomic<std::size_t> live_{0};

  // Frees the tag bits of `sequence` and counts it out of live_.
  void release(std::uint64_t sequence);

  // Guards what follows, except for an operation alone (data_phase_alone,
  // end_alone): the release of live_ by the operation that ended last and
  // its acquire in begin() order them.
  std::mutex mutex_;
  std::uint64_t next_start_ = 0;
  std::map<std::uint64_t, Waiting> waiting_;
  std::vector<std::pair<std::uint64_t, DataFootprint>> running_;  // few at once
  bool starting_ = false;                                         // a thread is running starts
#ifndef NDEBUG
  std::uint64_t ended_ = 0;  // how many ended, for the assertions
#endif
};

}  // namespace flowio::runtime
