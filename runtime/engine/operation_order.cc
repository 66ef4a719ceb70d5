#include "runtime/engine/operation_order.h"

#include <algorithm>
#include <cassert>

namespace flowio::runtime {

OperationOrder::Turn OperationOrder::begin() {
  const std::uint64_t sequence = next_sequence_++;
  std::atomic<bool>& tags = tags_live_[sequence % kSequencesApart];
  // Waits without a lock: atomic wait sleeps in the kernel, and end()'s
  // notify costs a system call only when someone sleeps.
  while (tags.load(std::memory_order_acquire)) tags.wait(true, std::memory_order_acquire);
  tags.store(true, std::memory_order_relaxed);
  const bool alone = live_.fetch_add(1, std::memory_order_acq_rel) == 0;
  return Turn{sequence, alone};
}

bool OperationOrder::interferes(const DataFootprint& footprint) const {
  return std::any_of(running_.begin(), running_.end(), [&](const auto& entry) {
    const DataFootprint& other = entry.second;
    if (footprint.alltoallw && other.alltoallw) return true;
    const bool either_writes = footprint.writing || other.writing;
    const bool meet = footprint.begin < other.end && other.begin < footprint.end;
    return either_writes && meet;
  });
}

void OperationOrder::data_phase_ready(std::uint64_t sequence, DataFootprint footprint,
                                      std::function<void()> start) {
  bool at_once = false;
  {
    std::lock_guard lock(mutex_);
    assert(sequence >= next_start_ && !waiting_.contains(sequence) && "ready once");
    // The common case, one operation at a time: it may start at once,
    // without being queued.
    at_once = !starting_ && sequence == next_start_ && waiting_.empty() && !interferes(footprint);
    if (at_once) {
      running_.emplace_back(sequence, footprint);
      ++next_start_;
    } else {
      waiting_.emplace(sequence, Waiting{footprint, std::move(start)});
    }
  }
  if (at_once) {
    // Nothing waited: one queued after the lock was let go starts itself
    // (start_what_may below, on its own thread).
    start();
    return;
  }
  start_what_may();
}

void OperationOrder::start_what_may() {
  std::unique_lock lock(mutex_);
  // One thread at a time runs starts, in order; an end meanwhile is seen by
  // the loop below.
  if (starting_) return;
  starting_ = true;
  while (!waiting_.empty() && waiting_.begin()->first == next_start_ &&
         !interferes(waiting_.begin()->second.footprint)) {
    Waiting next = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    running_.emplace_back(next_start_, next.footprint);
    ++next_start_;
    lock.unlock();
    next.start();
    lock.lock();
  }
  starting_ = false;
}

void OperationOrder::end(std::uint64_t sequence) {
  bool others_wait = false;
  {
    std::lock_guard lock(mutex_);
    others_wait = !waiting_.empty();
    const auto running =
        std::find_if(running_.begin(), running_.end(),
                     [sequence](const auto& entry) { return entry.first == sequence; });
    assert(running != running_.end() && "an operation ends once, after its data phase started");
    if (running != running_.end()) running_.erase(running);
#ifndef NDEBUG
    ++ended_;
    assert(ended_ <= next_start_);
#endif
  }
  release(sequence);
  // Only one that waited may now start: one that comes later starts itself.
  if (others_wait) start_what_may();
}

void OperationOrder::data_phase_alone([[maybe_unused]] std::uint64_t sequence) {
  assert(sequence == next_start_ && waiting_.empty() && running_.empty() && !starting_ &&
         "alone: every earlier operation ended");
  ++next_start_;
}

void OperationOrder::end_alone(std::uint64_t sequence) {
#ifndef NDEBUG
  ++ended_;
  assert(ended_ == next_start_ && sequence + 1 == next_start_);
#endif
  release(sequence);
}

void OperationOrder::release(std::uint64_t sequence) {
  std::atomic<bool>& tags = tags_live_[sequence % kSequencesApart];
  tags.store(false, std::memory_order_release);
  tags.notify_all();
  live_.fetch_sub(1, std::memory_order_release);
}

void OperationOrder::abandon(std::uint64_t sequence) {
  data_phase_ready(sequence, DataFootprint{}, [this, sequence] { end(sequence); });
}

}  // namespace flowio::runtime
