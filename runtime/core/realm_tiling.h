// RealmTiling: file realms described by datatypes, the realm policy of the
// seed paper "A New Flexible MPI Collective I/O Implementation" (ROMIO's
// file realm types): aggregator slot a's realm is a datatype tiled from a
// displacement, like a file view's filetype, so that a realm may be any
// periodic set of bytes (for instance stripes a, a + n, a + 2n, ... of a
// given size for n aggregators) rather than one contiguous range.
//
// The realms must partition the file: every byte belongs to exactly one
// slot. Their union repeats with the least common multiple of their
// extents (the period), so the tiling is kept as the list of segments of
// one period, [0, period), each a contiguous range owned by one slot
// (touching segments of one slot merged), and byte x belongs to the
// segment holding x mod period. A realm's tiling continues below its
// displacement: the displacement only sets its phase. Realms are fixed
// for the whole file (not per operation), so every collective call sees
// the same realms, as persistent file realms do.
//
// Immutable once built; may be shared across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "runtime/core/flat_type.h"

namespace flowio::core {

// One slot's realm: copies of `type` at displacement + k * extent, for
// every integer k.
struct RealmType {
  std::int64_t displacement = 0;
  const FlatType* type = nullptr;
};

class RealmTiling {
 public:
  // The most segments one period may hold (after merging): a bound on the
  // memory of a tiling and of the layouts built on it.
  static constexpr std::int64_t kMostSegments = std::int64_t{1} << 20;

  struct Segment {
    std::int64_t begin = 0;  // in [0, period)
    std::int64_t end = 0;
    int slot = 0;
  };

  // Round-robin stripes: stripe k = [k * unit, (k + 1) * unit) belongs to
  // slot k % slots. Throws UsageError(invalid_argument) for unit < 1.
  static RealmTiling stripes(int slots, std::int64_t unit);
  // Slot a's realm is realms[a]. Throws UsageError(invalid_datatype) for a
  // type without data, with a zero or negative extent, or whose copies
  // overlap or go back; UsageError(invalid_argument) when the realms
  // overlap or leave a byte to no slot (the message names the byte), or
  // when their period or segments exceed the bounds (2^40 bytes,
  // kMostSegments).
  static RealmTiling of_types(std::span<const RealmType> realms);
  // `slots` realms of one type: slot a's is `first` moved by a times the
  // type's size (the shift under which n copies of a type that holds
  // 1/n of each extent tile the file). Throws as of_types does.
  static RealmTiling of_first(const RealmType& first, int slots);

  int slots() const { return slots_; }
  std::int64_t period() const { return period_; }
  std::span<const Segment> segments() const { return segments_; }
  // The indices of the segments of `slot`, ascending.
  std::span<const std::size_t> segments_of(int slot) const {
    return segments_by_slot_[static_cast<std::size_t>(slot)];
  }
  // The index of the segment holding x mod period (x >= 0).
  std::size_t segment_at(std::int64_t x) const;
  // A fingerprint of the partition (slots, period and segments): equal
  // tilings have equal keys, so plans keyed by it never outlive a change.
  std::uint64_t key() const { return key_; }

 private:
  RealmTiling() = default;
  // Sorts, checks and merges `pieces` (owned ranges inside [0, period)).
  static RealmTiling of_segments(int slots, std::int64_t period, std::vector<Segment> pieces);

  int slots_ = 1;
  std::int64_t period_ = 1;
  std::vector<Segment> segments_;
  std::vector<std::vector<std::size_t>> segments_by_slot_;
  std::uint64_t key_ = 0;
};

// The realms a program described (File::set_file_realms), kept with the
// file while the aggregator count may still change with the hints: either
// one type whose copies give every slot its realm (RealmTiling::of_first),
// or one type per slot (RealmTiling::of_types).
struct RealmDescription {
  bool one_for_all = false;
  std::vector<std::int64_t> displacements;
  std::vector<std::shared_ptr<const FlatType>> types;

  // The tiling for `slots` aggregators. Throws as RealmTiling's builders
  // do, and UsageError(invalid_argument) when a list does not hold one
  // realm per aggregator.
  RealmTiling tiling(int slots) const;
};

}  // namespace flowio::core
