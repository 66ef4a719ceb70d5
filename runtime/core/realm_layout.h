// RealmLayout: which aggregator handles which bytes of the file in one
// collective operation (its file realm), and how each realm is cut into
// buffer iterations (windows).
//
// Realms are either contiguous ranges, one per aggregator slot (even split,
// aligned, load-balanced), or a periodic tiling of the file from an anchor
// (realm_tiling.h): stripes of a fixed unit dealt to the slots in turn
// (persistent file realms), or realms described by datatypes. A window is
// a contiguous range of at most `window_bytes` inside one realm (inside one
// segment of a tiling); its index counts the windows of its slot from the
// realm's start (from the anchor for a tiling), so that a client and an
// aggregator name the same window the same way without talking.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/core/realm_tiling.h"

namespace flowio::core {

struct Window {
  int slot = 0;
  std::int64_t index = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Immutable once built.
class RealmLayout {
 public:
  // Slot i owns [boundaries[i], boundaries[i+1]); boundaries are
  // nondecreasing, and the operation's data lies in [front, back).
  static RealmLayout ranges(std::vector<std::int64_t> boundaries, std::int64_t window_bytes);
  // Stripe k = [anchor + k*unit, anchor + (k+1)*unit) belongs to slot
  // k % slots; the operation's data lies in [begin, end), begin >= anchor.
  static RealmLayout striped(int slots, std::int64_t anchor, std::int64_t unit,
                             std::int64_t window_bytes, std::int64_t begin, std::int64_t end);
  // Byte x belongs to the slot of segment tiling.segment_at(x - anchor);
  // the operation's data lies in [begin, end), begin >= anchor. Costs
  // O(segments) to build; queries O(log segments).
  static RealmLayout tiled(std::shared_ptr<const RealmTiling> tiling, std::int64_t anchor,
                           std::int64_t window_bytes, std::int64_t begin, std::int64_t end);

  int slots() const { return slots_; }
  std::int64_t begin() const { return begin_; }
  std::int64_t end() const { return end_; }

  // The window holding file offset x, begin() <= x < end().
  Window window_at(std::int64_t x) const;
  // The first window of `slot` that ends after x, clipped to [begin, end);
  // none when the slot has no bytes at or after x.
  std::optional<Window> window_of_slot_from(int slot, std::int64_t x) const;
  // Whether the realm of `slot` meets the file range [from, to).
  bool realm_meets(int slot, std::int64_t from, std::int64_t to) const;

 private:
  RealmLayout() = default;
  Window clip(Window window) const;

  std::int64_t windows_in(std::int64_t bytes) const {
    return (bytes + window_bytes_ - 1) / window_bytes_;
  }

  int slots_ = 1;
  std::int64_t window_bytes_ = 1;
  std::int64_t begin_ = 0;
  std::int64_t end_ = 0;
  std::vector<std::int64_t> boundaries_;  // ranges
  // A tiling (set: tiled layout), its anchor, and per segment the windows
  // of its slot before it in one period; per slot its windows per period.
  std::shared_ptr<const RealmTiling> tiling_;
  std::int64_t anchor_ = 0;
  std::vector<std::int64_t> windows_before_;
  std::vector<std::int64_t> windows_per_period_;
};

}  // namespace flowio::core
