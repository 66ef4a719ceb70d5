#include "runtime/core/realm_layout.h"

#include <algorithm>
#include <span>

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
  return tiled(std::make_shared<const RealmTiling>(
                   RealmTiling::stripes(slots, std::max<std::int64_t>(unit, 1))),
               anchor, window_bytes, begin, end);
}

RealmLayout RealmLayout::tiled(std::shared_ptr<const RealmTiling> tiling, std::int64_t anchor,
                               std::int64_t window_bytes, std::int64_t begin, std::int64_t end) {
  RealmLayout layout;
  layout.slots_ = tiling->slots();
  layout.anchor_ = anchor;
  layout.window_bytes_ = std::max<std::int64_t>(window_bytes, 1);
  layout.begin_ = begin;
  layout.end_ = end;
  layout.windows_per_period_.assign(static_cast<std::size_t>(layout.slots_), 0);
  layout.windows_before_.reserve(tiling->segments().size());
  for (const RealmTiling::Segment& segment : tiling->segments()) {
    std::int64_t& count = layout.windows_per_period_[static_cast<std::size_t>(segment.slot)];
    layout.windows_before_.push_back(count);
    count += layout.windows_in(segment.end - segment.begin);
  }
  layout.tiling_ = std::move(tiling);
  return layout;
}

Window RealmLayout::clip(Window window) const {
  window.begin = std::max(window.begin, begin_);
  window.end = std::min(window.end, end_);
  return window;
}

Window RealmLayout::window_at(std::int64_t x) const {
  if (tiling_) {
    const std::size_t at = tiling_->segment_at(x - anchor_);
    const RealmTiling::Segment& segment = tiling_->segments()[at];
    const std::int64_t period = (x - anchor_) / tiling_->period();
    const std::int64_t period_begin = anchor_ + period * tiling_->period();
    const std::int64_t segment_begin = period_begin + segment.begin;
    const std::int64_t in_segment = (x - segment_begin) / window_bytes_;
    const std::int64_t window_begin = segment_begin + in_segment * window_bytes_;
    return clip(Window{segment.slot,
                       period * windows_per_period_[static_cast<std::size_t>(segment.slot)] +
                           windows_before_[at] + in_segment,
                       window_begin,
                       std::min(window_begin + window_bytes_, period_begin + segment.end)});
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
  if (tiling_) {
    // The slot's first segment at or after x's, in this period or the next.
    const std::span<const std::size_t> own = tiling_->segments_of(slot);
    if (own.empty()) return std::nullopt;
    const std::size_t at = tiling_->segment_at(x - anchor_);
    if (tiling_->segments()[at].slot == slot) return window_at(x);
    const auto next = std::upper_bound(own.begin(), own.end(), at);
    std::int64_t period_begin = x - anchor_ - (x - anchor_) % tiling_->period() + anchor_;
    std::size_t target = own.front();
    if (next != own.end()) {
      target = *next;
    } else {
      period_begin += tiling_->period();
    }
    x = period_begin + tiling_->segments()[target].begin;
    if (x >= end_) return std::nullopt;
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
