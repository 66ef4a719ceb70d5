// The table of a RangeLock (range_lock.h): every request that holds or
// waits for a byte range, in a fixed slot per (process, local slot), with
// a ticket that orders requests by arrival. The rules, which only read a
// copy of the table, live here so they can be tested without MPI.
//
// A request waits for the earlier requests that conflict with it (ranges
// overlap and one of the two is exclusive), and for nothing else: disjoint
// ranges and shared readers proceed together; a writer waits for the
// readers before it, and later readers wait for it (no writer starves),
// and a long range waits only for what came before it (no range starves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sync/lock.h"

namespace flowio::sync {

// One slot as it lies in the window: four 64-bit words.
struct RangeSlot {
  std::uint64_t ticket = 0;  // 0: the slot is free
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t exclusive = 0;

  bool used() const { return ticket != 0; }
  ByteRange range() const {
    return {static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end)};
  }
};
static_assert(sizeof(RangeSlot) == 4 * sizeof(std::uint64_t));

inline constexpr int kRangeSlotWords = 4;

// The window: word 0 is the last ticket given out, then the slots.
inline constexpr int kRangeTableHeaderWords = 1;

// The slots of a table read from the window (header word first).
std::vector<RangeSlot> slots_of_table(std::span<const std::uint64_t> words);

bool conflict(const RangeSlot& a, const RangeSlot& b);

// Whether the request in `slots[index]` must wait: an earlier request
// conflicts with it.
bool blocked(std::span<const RangeSlot> slots, std::size_t index);

// The requests that may proceed once `slots[released]` leaves: those it
// blocked that nothing else earlier blocks. Each waiter is in exactly one
// such list, the one of the last of its blockers to leave (blockers only
// leave: later requests never block it).
std::vector<std::size_t> unblocked_by_release(std::span<const RangeSlot> slots,
                                              std::size_t released);

}  // namespace flowio::sync
