// PlanCache alone: full keys, hits, misses, least-recently-used eviction,
// the bound and clearing, and dropping every plan after a failed compile.
#include "runtime/plan/plan_cache.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

using flowio::runtime::CollectivePlan;
using flowio::runtime::PlanCache;
using flowio::runtime::PlanKey;
using flowio::runtime::PlanKeyPart;

namespace {

// The key of a write whose processes' accesses are `parts`.
struct Parts {
  std::vector<PlanKeyPart> parts;
  PlanKeyPart operator()(std::size_t rank) const { return parts[rank]; }
};

PlanKey<Parts> key_of(std::vector<PlanKeyPart> parts, bool writing = true,
                      const void* tiling = nullptr) {
  return PlanKey<Parts>{writing, tiling, Parts{std::move(parts)}};
}

// A one-process key, told apart by `n`.
PlanKey<Parts> key(std::int64_t n) { return key_of({{n, 100}}); }

PlanCache cache_for(std::size_t capacity, int ranks = 1) {
  PlanCache cache(capacity);
  cache.set_key_ranks(ranks);
  return cache;
}

}  // namespace

// Keys are compared whole: any process's part, the direction or the tiling
// differing is another key, whatever their order.
TEST_CASE("Runtime.PlanCache.KeysComparedWhole") {
  PlanCache cache = cache_for(4, 3);
  auto plan = std::make_shared<CollectivePlan>();
  const std::vector<PlanKeyPart> parts = {{0, 10}, {10, 10}, {20, 10}};
  cache.insert(key_of(parts), plan);
  CHECK(cache.find(key_of(parts)) == plan);
  std::vector<PlanKeyPart> last_differs = parts;
  last_differs[2].bytes = 11;
  CHECK(!cache.find(key_of(last_differs)));
  std::vector<PlanKeyPart> reordered = {parts[1], parts[0], parts[2]};
  CHECK(!cache.find(key_of(reordered)));
  CHECK(!cache.find(key_of(parts, false)));
  const int tiling = 0;
  CHECK(!cache.find(key_of(parts, true, &tiling)));
}

// A kept plan is found under its key, others are not.
TEST_CASE("Runtime.PlanCache.FindsWhatItKept") {
  PlanCache cache = cache_for(4);
  auto plan = std::make_shared<CollectivePlan>();
  CHECK(!cache.find(key(7)));
  cache.insert(key(7), plan);
  CHECK(cache.find(key(7)) == plan);
  CHECK(!cache.find(key(8)));
}

// Past its capacity the cache drops the least recently used plan; a find
// counts as a use.
TEST_CASE("Runtime.PlanCache.EvictsLeastRecentlyUsed") {
  PlanCache cache = cache_for(2);
  auto one = std::make_shared<CollectivePlan>(), two = std::make_shared<CollectivePlan>(),
       three = std::make_shared<CollectivePlan>();
  cache.insert(key(1), one);
  cache.insert(key(2), two);
  CHECK(cache.find(key(1)) == one);  // 2 is now the least recently used
  cache.insert(key(3), three);
  CHECK(cache.size() == 2);
  CHECK(!cache.find(key(2)));
  CHECK(cache.find(key(1)) == one);
  CHECK(cache.find(key(3)) == three);
}

// Capacity 0 keeps nothing; clear() and a smaller capacity drop plans (the
// most recently used stay).
TEST_CASE("Runtime.PlanCache.CapacityAndClear") {
  PlanCache none = cache_for(0);
  none.insert(key(1), std::make_shared<CollectivePlan>());
  CHECK(!none.find(key(1)));
  PlanCache cache = cache_for(4);
  for (std::int64_t n = 0; n < 4; ++n) cache.insert(key(n), std::make_shared<CollectivePlan>());
  cache.set_capacity(1);
  CHECK(cache.size() == 1);
  CHECK(cache.find(key(3)));
  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(!cache.find(key(3)));
}

// A plan whose compiling could not begin is kept as null, and found as
// kept (not as a miss), so every process's cache answers alike.
TEST_CASE("Runtime.PlanCache.KeepsAPlanThatCouldNotBeMade") {
  PlanCache cache = cache_for(2);
  cache.insert(key(5), nullptr);
  const std::optional<std::shared_ptr<CollectivePlan>> kept = cache.find(key(5));
  REQUIRE(kept);
  CHECK(*kept == nullptr);
}

// A failure count larger than any noted before drops every plan; the same
// count again drops nothing kept since.
TEST_CASE("Runtime.PlanCache.NewFailureDropsEveryPlan") {
  PlanCache cache = cache_for(4);
  cache.insert(key(1), std::make_shared<CollectivePlan>());
  cache.note_failures(0);
  CHECK(cache.size() == 1);
  cache.note_failures(2);
  CHECK(cache.size() == 0);
  cache.insert(key(2), std::make_shared<CollectivePlan>());
  cache.note_failures(2);
  cache.note_failures(1);
  CHECK(cache.find(key(2)));
}
