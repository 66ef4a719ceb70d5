#include "runtime/core/realm_layout.h"

#include <algorithm>

namespace flowio::core {

RealmLayout RealmLayout::ranges(std::vector<std::int64_t> boundaries, std::int64_t window_bytes) {
  RealmLayout layout;
  layout.slots_ = static_cast<int>(boundaries.size()) - 1;
  layout.window_bytes_ = std::max<std::int64_t>(window_bytes, 1);
  layout.begin_ = boundaries.front();
  layout.end_ = boundaries.back();
  layout.boundaries_ = std::move(boundaries);
  return layout;
}

RealmLayout RealmLayout::striped(int slots, std::int64_t anchor, std::int64_t unit,
                                 std::int64_t window_bytes, std::int64_t begin, std::int64_t end) {
  RealmLayout layout;
  layout.striped_ = true;
  layout.slots_ = slots;
  layout.anchor_ = anchor;
  layout.unit_ = std::max<std::int64_t>(unit, 1);
  layout.window_bytes_ = std::max<std::int64_t>(window_bytes, 1);
  layout.begin_ = begin;
  layout.end_ = end;
  return layout;
}

Window RealmLayout::clip(Window window) const {
  window.begin = std::max(window.begin, begin_);
  window.end = std::min(window.end, end_);
  return window;
}

Window RealmLayout::window_at(std::int64_t x) const {
  if (striped_) {
    const std::int64_t stripe = (x - anchor_) / unit_;
    const std::int64_t stripe_begin = anchor_ + stripe * unit_;
    const std::int64_t windows_per_stripe = (unit_ + window_bytes_ - 1) / window_bytes_;
    const std::int64_t in_stripe = (x - stripe_begin) / window_bytes_;
    const std::int64_t window_begin = stripe_begin + in_stripe * window_bytes_;
    return clip(Window{static_cast<int>(stripe % slots_),
                       (stripe / slots_) * windows_per_stripe + in_stripe, window_begin,
                       std::min(window_begin + window_bytes_, stripe_begin + unit_)});
  }
  // The last slot whose range starts at or before x (empty ranges skipped).
  const auto after = std::upper_bound(boundaries_.begin(), boundaries_.end() - 1, x);
  const int slot = static_cast<int>(after - boundaries_.begin()) - 1;
  const std::int64_t realm_begin = boundaries_[slot];
  const std::int64_t index = (x - realm_begin) / window_bytes_;
  const std::int64_t window_begin = realm_begin + index * window_bytes_;
  return clip(Window{slot, index, window_begin,
                     std::min(window_begin + window_bytes_, boundaries_[slot + 1])});
}

std::optional<Window> RealmLayout::window_of_slot_from(int slot, std::int64_t x) const {
  x = std::max(x, begin_);
  if (x >= end_) return std::nullopt;
  if (striped_) {
    std::int64_t stripe = (x - anchor_) / unit_;
    const std::int64_t behind = ((slot - stripe % slots_) + slots_) % slots_;
    if (behind != 0) {
      stripe += behind;
      x = anchor_ + stripe * unit_;
      if (x >= end_) return std::nullopt;
    }
    return window_at(x);
  }
  if (boundaries_[slot] >= boundaries_[slot + 1]) return std::nullopt;
  x = std::max(x, boundaries_[slot]);
  if (x >= boundaries_[slot + 1] || x >= end_) return std::nullopt;
  return window_at(x);
}

bool RealmLayout::realm_meets(int slot, std::int64_t from, std::int64_t to) const {
  from = std::max(from, begin_);
  to = std::min(to, end_);
  if (from >= to) return false;
  const std::optional<Window> window = window_of_slot_from(slot, from);
  return window && window->begin < to;
}

}  // namespace flowio::core
