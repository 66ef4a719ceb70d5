// PlanCache alone: keys, hits, misses, least-recently-used eviction, the
// bound and clearing, and dropping every plan after a failed compile.
#include "runtime/plan_cache.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

using flowio::runtime::CollectivePlan;
using flowio::runtime::PlanCache;

// The combined key depends on every process's key and on their order.
TEST_CASE("Runtime.PlanCache.CombinedKeyDependsOnEveryKeyInOrder") {
  const std::vector<std::uint64_t> a = {1, 2, 3}, b = {1, 2, 4}, c = {3, 2, 1};
  CHECK(PlanCache::combine(a) == PlanCache::combine(a));
  CHECK(PlanCache::combine(a) != PlanCache::combine(b));
  CHECK(PlanCache::combine(a) != PlanCache::combine(c));
}

// A kept plan is found under its key, others are not.
TEST_CASE("Runtime.PlanCache.FindsWhatItKept") {
  PlanCache cache(4);
  auto plan = std::make_shared<CollectivePlan>();
  CHECK(!cache.find(7));
  cache.insert(7, plan);
  CHECK(cache.find(7) == plan);
  CHECK(!cache.find(8));
}

// Past its capacity the cache drops the least recently used plan; a find
// counts as a use.
TEST_CASE("Runtime.PlanCache.EvictsLeastRecentlyUsed") {
  PlanCache cache(2);
  auto one = std::make_shared<CollectivePlan>(), two = std::make_shared<CollectivePlan>(),
       three = std::make_shared<CollectivePlan>();
  cache.insert(1, one);
  cache.insert(2, two);
  CHECK(cache.find(1) == one);  // 2 is now the least recently used
  cache.insert(3, three);
  CHECK(cache.size() == 2);
  CHECK(!cache.find(2));
  CHECK(cache.find(1) == one);
  CHECK(cache.find(3) == three);
}

// Capacity 0 keeps nothing; clear() and a smaller capacity drop plans.
TEST_CASE("Runtime.PlanCache.CapacityAndClear") {
  PlanCache none(0);
  none.insert(1, std::make_shared<CollectivePlan>());
  CHECK(!none.find(1));
  PlanCache cache(4);
  for (std::uint64_t key = 0; key < 4; ++key) cache.insert(key, std::make_shared<CollectivePlan>());
  cache.set_capacity(1);
  CHECK(cache.size() == 1);
  CHECK(cache.find(3));
  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(!cache.find(3));
}

// Keys mixed one at a time give the combined key.
TEST_CASE("Runtime.PlanCache.MixingKeysOneByOneCombinesThem") {
  const std::vector<std::uint64_t> keys = {5, 9, 2};
  std::uint64_t mixed = PlanCache::kNoKeys;
  for (std::uint64_t key : keys) mixed = PlanCache::mix(mixed, key);
  CHECK(mixed == PlanCache::combine(keys));
}

// A plan whose compiling could not begin is kept as null, and found as
// kept (not as a miss), so every process's cache answers alike.
TEST_CASE("Runtime.PlanCache.KeepsAPlanThatCouldNotBeMade") {
  PlanCache cache(2);
  cache.insert(5, nullptr);
  const std::optional<std::shared_ptr<CollectivePlan>> kept = cache.find(5);
  REQUIRE(kept);
  CHECK(*kept == nullptr);
}

// A failure count larger than any noted before drops every plan; the same
// count again drops nothing kept since.
TEST_CASE("Runtime.PlanCache.NewFailureDropsEveryPlan") {
  PlanCache cache(4);
  cache.insert(1, std::make_shared<CollectivePlan>());
  cache.note_failures(0);
  CHECK(cache.size() == 1);
  cache.note_failures(2);
  CHECK(cache.size() == 0);
  cache.insert(2, std::make_shared<CollectivePlan>());
  cache.note_failures(2);
  cache.note_failures(1);
  CHECK(cache.find(2));
}
