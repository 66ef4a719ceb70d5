#include "runtime/plan_cache.h"

namespace flowio::runtime {

std::uint64_t PlanCache::combine(std::span<const std::uint64_t> keys) {
  // FNV-1a over the keys' bytes: order matters, as it should.
  std::uint64_t hash = 14695981039346656037ull;
  for (std::uint64_t key : keys) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (key >> (8 * byte)) & 0xff;
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

std::shared_ptr<CollectivePlan> PlanCache::find(std::uint64_t key) {
  for (auto entry = entries_.begin(); entry != entries_.end(); ++entry) {
    if (entry->key == key) {
      entries_.splice(entries_.begin(), entries_, entry);
      return entries_.front().plan;
    }
  }
  return nullptr;
}

void PlanCache::insert(std::uint64_t key, std::shared_ptr<CollectivePlan> plan) {
  if (capacity_ == 0) return;
  entries_.push_front(Entry{key, std::move(plan)});
  while (entries_.size() > capacity_) entries_.pop_back();
}

void PlanCache::clear() { entries_.clear(); }

void PlanCache::set_capacity(std::size_t capacity) {
  capacity_ = capacity;
  while (entries_.size() > capacity_) entries_.pop_back();
}

}  // namespace flowio::runtime
