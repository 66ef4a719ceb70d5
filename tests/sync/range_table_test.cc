// The range lock's rules: which requests conflict, which wait, and whom a
// release lets in.
#include "sync/range_table.h"

#include <doctest/doctest.h>

#include <vector>

using namespace flowio::sync;

namespace {

RangeSlot request(std::uint64_t ticket, std::uint64_t begin, std::uint64_t end, bool exclusive) {
  return RangeSlot{ticket, begin, end, exclusive ? 1u : 0u};
}

}  // namespace

// Overlapping ranges conflict unless both are shared; touching ranges and
// free slots never do.
TEST_CASE("Sync.RangeTable.Conflicts") {
  CHECK(conflict(request(1, 0, 10, true), request(2, 5, 15, false)));
  CHECK(conflict(request(1, 0, 10, false), request(2, 5, 15, true)));
  CHECK_FALSE(conflict(request(1, 0, 10, false), request(2, 5, 15, false)));
  CHECK_FALSE(conflict(request(1, 0, 10, true), request(2, 10, 20, true)));
  CHECK_FALSE(conflict(RangeSlot{}, request(2, 0, 20, true)));
  CHECK_FALSE(conflict(request(1, 5, 5, true), request(2, 0, 20, true)));
}

// A request waits only for earlier conflicting requests.
TEST_CASE("Sync.RangeTable.WaitsForEarlierConflictsOnly") {
  const std::vector<RangeSlot> slots = {
      request(1, 0, 100, true),     // holds
      request(2, 200, 300, true),   // disjoint: holds too
      request(3, 50, 60, false),    // reader inside the writer's range: waits
      RangeSlot{},                  // free
      request(4, 250, 260, false),  // behind the second writer: waits
  };
  CHECK_FALSE(blocked(slots, 0));
  CHECK_FALSE(blocked(slots, 1));
  CHECK(blocked(slots, 2));
  CHECK(blocked(slots, 4));
}

// A writer that arrives after readers waits for them, and readers that
// arrive after the writer wait for it: no writer starves.
TEST_CASE("Sync.RangeTable.ReadersDoNotStarveWriters") {
  const std::vector<RangeSlot> slots = {
      request(1, 0, 100, false),
      request(2, 0, 100, true),
      request(3, 0, 100, false),
  };
  CHECK_FALSE(blocked(slots, 0));
  CHECK(blocked(slots, 1));
  CHECK(blocked(slots, 2));
  // The first reader leaves: the writer goes; the later reader still waits.
  CHECK(unblocked_by_release(slots, 0) == std::vector<std::size_t>{1});
}

// A long range waits for what came before it and is not overtaken by
// short ranges that came after.
TEST_CASE("Sync.RangeTable.LongRangesDoNotStarve") {
  const std::vector<RangeSlot> slots = {
      request(1, 0, 10, true),
      request(2, 0, 1000, true),
      request(3, 20, 30, true),
  };
  CHECK(blocked(slots, 2));  // overlaps the waiting long range
  CHECK(unblocked_by_release(slots, 0) == std::vector<std::size_t>{1});
  std::vector<RangeSlot> later = slots;
  later[0] = RangeSlot{};
  CHECK(unblocked_by_release(later, 1) == std::vector<std::size_t>{2});
}

// A waiter blocked by two holders is woken by the second to leave, once.
TEST_CASE("Sync.RangeTable.WokenByTheLastBlockerOnce") {
  std::vector<RangeSlot> slots = {
      request(1, 0, 10, true),
      request(2, 20, 30, true),
      request(3, 0, 30, true),
  };
  CHECK(unblocked_by_release(slots, 0).empty());
  slots[0] = RangeSlot{};
  CHECK(unblocked_by_release(slots, 1) == std::vector<std::size_t>{2});
}

// Several readers behind one writer are all let in by its release.
TEST_CASE("Sync.RangeTable.ReleaseLetsInAllReaders") {
  const std::vector<RangeSlot> slots = {
      request(1, 0, 100, true),
      request(2, 10, 20, false),
      request(3, 30, 40, false),
      request(4, 0, 100, false),
  };
  CHECK(unblocked_by_release(slots, 0) == std::vector<std::size_t>{1, 2, 3});
}

// The window's words read back as the slots they hold.
TEST_CASE("Sync.RangeTable.SlotsOfTable") {
  std::vector<std::uint64_t> words(kRangeTableHeaderWords + 2 * kRangeSlotWords, 0);
  words[0] = 9;
  words[kRangeTableHeaderWords + kRangeSlotWords + 0] = 7;
  words[kRangeTableHeaderWords + kRangeSlotWords + 1] = 40;
  words[kRangeTableHeaderWords + kRangeSlotWords + 2] = 50;
  words[kRangeTableHeaderWords + kRangeSlotWords + 3] = 1;
  const std::vector<RangeSlot> slots = slots_of_table(words);
  REQUIRE(slots.size() == 2);
  CHECK_FALSE(slots[0].used());
  CHECK(slots[1].ticket == 7);
  CHECK(slots[1].range().begin == 40);
  CHECK(slots[1].range().end == 50);
  CHECK(slots[1].exclusive == 1);
}
