#include "sync/range_table.h"

namespace flowio::sync {

std::vector<RangeSlot> slots_of_table(std::span<const std::uint64_t> words) {
  std::vector<RangeSlot> slots((words.size() - kRangeTableHeaderWords) / kRangeSlotWords);
  const std::uint64_t* word = words.data() + kRangeTableHeaderWords;
  for (RangeSlot& slot : slots) {
    slot = RangeSlot{word[0], word[1], word[2], word[3]};
    word += kRangeSlotWords;
  }
  return slots;
}

bool conflict(const RangeSlot& a, const RangeSlot& b) {
  return a.used() && b.used() && (a.exclusive != 0 || b.exclusive != 0) &&
         a.range().overlaps(b.range());
}

bool blocked(std::span<const RangeSlot> slots, std::size_t index) {
  const RangeSlot& request = slots[index];
  for (std::size_t other = 0; other < slots.size(); ++other) {
    if (other != index && slots[other].used() && slots[other].ticket < request.ticket &&
        conflict(slots[other], request)) {
      return true;
    }
  }
  return false;
}

std::vector<std::size_t> unblocked_by_release(std::span<const RangeSlot> slots,
                                              std::size_t released) {
  std::vector<RangeSlot> after(slots.begin(), slots.end());
  after[released] = RangeSlot{};
  std::vector<std::size_t> unblocked;
  const RangeSlot& leaving = slots[released];
  for (std::size_t waiter = 0; waiter < slots.size(); ++waiter) {
    if (waiter == released || !slots[waiter].used() || slots[waiter].ticket < leaving.ticket ||
        !conflict(leaving, slots[waiter])) {
      continue;
    }
    if (!blocked(after, waiter)) unblocked.push_back(waiter);
  }
  return unblocked;
}

}  // namespace flowio::sync
