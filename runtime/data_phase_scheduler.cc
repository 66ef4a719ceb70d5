#include "runtime/data_phase_scheduler.h"

#include <algorithm>


namespace flowio::runtime {

bool DataPhaseScheduler::interferes(const DataFootprint& footprint) const {
  return std::any_of(running_.begin(), running_.end(), [&](const auto& entry) {
    const DataFootprint& other = entry.second;
    if (footprint.alltoallw && other.alltoallw) return true;
    const bool either_writes = footprint.writing || other.writing;
    const bool meet = footprint.begin < other.end && other.begin < footprint.end;
    return either_writes && meet;
  });
}

void DataPhaseScheduler::ready(std::uint64_t sequence, DataFootprint footprint,
                               std::function<void()> start) {
  {
    std::lock_guard lock(mutex_);
    // The common case, one operation at a time: it may start at once,
    // without being queued.
    const bool at_once = !starting_ && sequence == next_ && waiting_.empty() && running_.empty();
    if (!at_once) {
      waiting_.emplace(sequence, Waiting{footprint, std::move(start)});
    } else {
      running_.emplace_back(sequence, footprint);
      ++next_;
    }
  }
  if (start) start();
  start_what_may();
}

void DataPhaseScheduler::finished(std::uint64_t sequence) {
  {
    std::lock_guard lock(mutex_);
    std::erase_if(running_, [sequence](const auto& entry) { return entry.first == sequence; });
  }
  start_what_may();
}

void DataPhaseScheduler::skip(std::uint64_t sequence) {
  {
    std::lock_guard lock(mutex_);
    if (!starting_ && sequence == next_ && waiting_.empty()) {
      ++next_;
      return;
    }
    waiting_.emplace(sequence, Waiting{DataFootprint{}, nullptr});
  }
  start_what_may();
}

void DataPhaseScheduler::start_what_may() {
  std::unique_lock lock(mutex_);
  // One thread at a time runs starts, in order; a finish meanwhile is
  // seen by the loop below.
  if (starting_) return;
  starting_ = true;
  while (!waiting_.empty() && waiting_.begin()->first == next_) {
    if (!waiting_.begin()->second.start) {
      // Skipped: its turn passes at once.
      waiting_.erase(waiting_.begin());
      ++next_;
      continue;
    }
    if (interferes(waiting_.begin()->second.footprint)) break;
    Waiting next = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    running_.emplace_back(next_, next.footprint);
    ++next_;
    lock.unlock();
    next.start();
    lock.lock();
  }
  starting_ = false;
}

}  // namespace flowio::runtime
