#include "runtime/plan_cache.h"

#include <algorithm>

#include "runtime/core/hash.h"

namespace flowio::runtime {

// Each key is mixed into the hash a word at a time: order matters, as it
// should.
std::uint64_t PlanCache::mix(std::uint64_t combined, std::uint64_t key) noexcept {
  return core::hash_combine(combined, key);
}

std::uint64_t PlanCache::combine(std::span<const std::uint64_t> keys) noexcept {
  std::uint64_t hash = kNoKeys;
  for (std::uint64_t key : keys) hash = mix(hash, key);
  return hash;
}

std::optional<std::shared_ptr<CollectivePlan>> PlanCache::find(std::uint64_t key) noexcept {
  for (Entry& entry : entries_) {
    if (entry.key == key) {
      entry.used = ++uses_;
      return entry.plan;
    }
  }
  return std::nullopt;
}

void PlanCache::insert(std::uint64_t key, std::shared_ptr<CollectivePlan> plan) noexcept {
  if (capacity_ == 0) return;
  if (entries_.size() < capacity_) {
    // Within the reserved room: no allocation.
    entries_.push_back(Entry{key, std::move(plan), ++uses_});
    return;
  }
  const auto oldest =
      std::min_element(entries_.begin(), entries_.end(),
                       [](const Entry& a, const Entry& b) { return a.used < b.used; });
  *oldest = Entry{key, std::move(plan), ++uses_};
}

void PlanCache::clear() noexcept { entries_.clear(); }

void PlanCache::set_capacity(std::size_t capacity) {
  capacity_ = capacity;
  while (entries_.size() > capacity_) {
    entries_.erase(
        std::min_element(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.used < b.used; }));
  }
  entries_.reserve(capacity_);
}

void PlanCache::note_failures(std::int64_t failures) noexcept {
  if (failures <= failures_) return;
  failures_ = failures;
  clear();
}

}  // namespace flowio::runtime
