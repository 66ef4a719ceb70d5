#include "runtime/plan/plan_cache.h"

#include <algorithm>

namespace flowio::runtime {

void PlanCache::set_key_ranks(int ranks) {
  ranks_ = static_cast<std::size_t>(std::max(ranks, 1));
  reserve_entries();
}

void PlanCache::set_capacity(std::size_t capacity) {
  // The most recently used plans stay.
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.kept != b.kept ? a.kept : a.used > b.used;
  });
  entries_.resize(capacity);
  reserve_entries();
}

void PlanCache::reserve_entries() {
  for (Entry& entry : entries_) entry.parts.reserve(ranks_);
}

void PlanCache::clear() noexcept {
  for (Entry& entry : entries_) {
    entry.kept = false;
    entry.plan.reset();
  }
}

std::size_t PlanCache::size() const {
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.kept; }));
}

void PlanCache::note_failures(std::int64_t failures) noexcept {
  if (failures <= failures_) return;
  failures_ = failures;
  clear();
}

}  // namespace flowio::runtime
