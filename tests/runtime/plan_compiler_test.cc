// The plan compiler alone: the order of a client's messages to its
// aggregators, and that they carry its whole access once.
#include "runtime/plan/plan_compiler.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/core/piece_cursor.h"
#include "runtime/core/realm_layout.h"

using namespace flowio::core;
using namespace flowio::runtime;

namespace {

// Pieces of `length` bytes every `stride` bytes over [0, end).
Access strided(std::int64_t end, std::int64_t length, std::int64_t stride) {
  std::vector<Piece> pieces;
  for (std::int64_t at = 0; at < end; at += stride) pieces.push_back(Piece{at, length});
  return Access(std::move(pieces));
}

CollectivePlan items_for(const RealmLayout& layout, const Access& mine,
                         std::vector<int> aggregator_ranks) {
  CollectiveSettings settings;
  settings.aggregator_ranks = std::move(aggregator_ranks);
  CollectivePlan plan;
  plan.two_phase = true;
  plan.layout = layout;
  plan_items_step(settings, mine, static_cast<int>(settings.aggregator_ranks.size()), plan);
  return plan;
}

// The Alltoallw rounds of `mine` over `layout`, aggregators on ranks 0-2,
// as the aggregator of `slot` (with these `clients`) or as none.
CollectivePlan rounds_for(const RealmLayout& layout, const Access& mine, int slot = -1,
                          std::vector<CollectiveClient> clients = {}) {
  CollectiveSettings settings;
  settings.aggregator_ranks = {0, 1, 2};
  settings.alltoallw = true;
  CollectivePlan plan;
  plan.two_phase = true;
  plan.layout = layout;
  plan.slot = slot;
  plan.clients = std::move(clients);
  plan_items_step(settings, mine, 3, plan);
  return plan;
}

// The items, sorted by their place in the data stream, follow each other
// without gap or overlap and add up to the access.
void check_cover_access(std::vector<ClientItemPlan> items, const Access& mine) {
  std::sort(items.begin(), items.end(),
            [](const ClientItemPlan& a, const ClientItemPlan& b) { return a.from < b.from; });
  std::int64_t next = 0;
  for (const ClientItemPlan& item : items) {
    CHECK(item.from == next);
    CHECK(item.bytes > 0);
    next = item.from + item.bytes;
  }
  CHECK(next == mine.bytes_before(mine.file_end()));
}

}  // namespace

// Realms of whole ranges: the k-th window of every aggregator comes before
// the (k+1)-th of any, so that the aggregators work side by side rather
// than the first realm's all through before the second's.
TEST_CASE("Runtime.PlanCompiler.ClientItemsGoRoundTheAggregators") {
  // Two realms of 4 windows of 1 KiB; the access touches all 8 windows.
  const RealmLayout layout = RealmLayout::ranges({0, 4096, 8192}, 1024);
  const Access mine = strided(8192, 48, 64);
  const CollectivePlan plan = items_for(layout, mine, {5, 3});
  REQUIRE(plan.client_items.size() == 8);
  for (std::size_t i = 0; i < plan.client_items.size(); ++i) {
    CHECK(plan.client_items[i].window == static_cast<std::int64_t>(i / 2));
    CHECK(plan.client_items[i].peer == (i % 2 == 0 ? 5 : 3));
  }
  check_cover_access(plan.client_items, mine);
}

// Realms of different lengths: an aggregator with more windows keeps its
// later ones after the others' have run out; a client whose access starts
// part way into a realm still orders by window index.
TEST_CASE("Runtime.PlanCompiler.ClientItemsOfUnevenRealms") {
  // Slot 0: windows 0..1 of [0, 2048); slot 1: windows 0..5 of [2048, 8192).
  const RealmLayout layout = RealmLayout::ranges({0, 2048, 8192}, 1024);
  const Access mine = strided(8192, 100, 512);
  const CollectivePlan plan = items_for(layout, mine, {0, 1});
  const std::vector<std::pair<int, std::int64_t>> expected = {{0, 0}, {1, 0}, {0, 1}, {1, 1},
                                                              {1, 2}, {1, 3}, {1, 4}, {1, 5}};
  REQUIRE(plan.client_items.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(plan.client_items[i].peer == expected[i].first);
    CHECK(plan.client_items[i].window == expected[i].second);
  }
  check_cover_access(plan.client_items, mine);

  // Only the last 3 KiB of the file: slot 1's windows 3..5.
  std::vector<Piece> tail;
  for (std::int64_t at = 5120; at < 8192; at += 256) tail.push_back(Piece{at, 16});
  const Access late(std::move(tail));
  const CollectivePlan tail_plan = items_for(layout, late, {0, 1});
  REQUIRE(tail_plan.client_items.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(tail_plan.client_items[i].peer == 1);
    CHECK(tail_plan.client_items[i].window == static_cast<std::int64_t>(3 + i));
  }
  check_cover_access(tail_plan.client_items, late);
}

// Alltoallw rounds lay a client's shares for every aggregator of a round
// one after another: with three windows of 1 GiB the third share starts
// 2 GiB in, past what an int displacement holds. Only the plan is made:
// no data moves.
TEST_CASE("Runtime.PlanCompiler.RoundSharesPast2To31") {
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  const RealmLayout layout = RealmLayout::ranges({0, kGiB, 2 * kGiB, 3 * kGiB}, kGiB);
  const Access mine(std::vector<Piece>{Piece{0, 3 * kGiB}});
  const CollectivePlan plan = rounds_for(layout, mine);
  CHECK(plan.alltoallw);
  REQUIRE(plan.rounds.size() == 1);
  const flowio::runtime::RoundPlan& round = plan.rounds[0];
  CHECK(round.share_bytes == 3 * kGiB);
  REQUIRE(round.shares.size() == 3);
  for (std::size_t slot = 0; slot < 3; ++slot) {
    CAPTURE(slot);
    CHECK(round.shares[slot].peer == static_cast<int>(slot));
    CHECK(round.shares[slot].from == static_cast<std::int64_t>(slot) * kGiB);
    CHECK(round.shares[slot].bytes == kGiB);
  }
  CHECK(plan.no_counts == std::vector<MPI_Count>(3, 0));
}

// An access of two small pieces 2^40 bytes apart, windows of 4 KiB, three
// aggregators: the rounds this process plans are those of its two
// pieces, not the 2^28 windows between them (each round used to be
// planned, and every process posted it: memory and time in proportion to
// the extent).
TEST_CASE("Runtime.PlanCompiler.SparseRoundsCostTheirData") {
  constexpr std::int64_t kFar = std::int64_t{1} << 40;
  constexpr std::int64_t kWindow = 4096;
  const RealmLayout layout =
      RealmLayout::ranges({0, kFar / 3, 2 * (kFar / 3), kFar + kWindow}, kWindow);
  const Access mine(std::vector<Piece>{Piece{100, 200}, Piece{kFar + 8, 300}});
  const CollectivePlan plan = rounds_for(layout, mine, 2, {CollectiveClient{0, mine}});
  REQUIRE(plan.rounds.size() == 2);
  // The first piece is slot 0's first window, the second lies in slot 2's
  // realm, whose windows count from its start.
  CHECK(plan.rounds[0].index == 0);
  REQUIRE(plan.rounds[0].shares.size() == 1);
  CHECK(plan.rounds[0].shares[0].peer == 0);
  CHECK(plan.rounds[0].shares[0].bytes == 200);
  CHECK_FALSE(plan.rounds[0].window);
  const std::int64_t second = (kFar + 8 - 2 * (kFar / 3)) / kWindow;
  CHECK(plan.rounds[1].index == second);
  REQUIRE(plan.rounds[1].shares.size() == 1);
  CHECK(plan.rounds[1].shares[0].peer == 2);
  CHECK(plan.rounds[1].shares[0].from == 200);
  REQUIRE(plan.rounds[1].window);
  // As the aggregator of slot 2, one window: the one with its client's data.
  REQUIRE(plan.windows.size() == 1);
  CHECK(*plan.rounds[1].window == 0);
  CHECK(plan.windows[0].total == 300);
  CHECK(plan.footprint() < 4096);
}
