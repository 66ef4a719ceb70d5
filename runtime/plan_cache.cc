#include "runtime/plan_cache.h"

namespace flowio::runtime {

std::uint64_t PlanCache::combine(std::span<const std::uint64_t> keys) {
  // Each key mixed into the hash a word at a time by splitmix64's
  // finalizer (a bijection of 64 bits in which every input bit reaches
  // every output bit): order matters, as it should.
  std::uint64_t hash = 14695981039346656037ull;
  for (std::uint64_t key : keys) {
    hash = (hash ^ key) + 0x9e3779b97f4a7c15ull;
    hash = (hash ^ (hash >> 30)) * 0xbf58476d1ce4e5b9ull;
    hash = (hash ^ (hash >> 27)) * 0x94d049bb133111ebull;
    hash ^= hash >> 31;
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
