#include "runtime/core/realm_tiling.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "flowio/error.h"
#include "runtime/core/checked_arithmetic.h"
#include "runtime/core/hash.h"
#include "runtime/core/piece_cursor.h"

namespace flowio::core {
namespace {

// The longest period accepted, as for sizes given by hints: far beyond
// any realm a program would describe, and small enough that a period
// times a segment count stays within 64 bits.
constexpr std::int64_t kMostPeriod = std::int64_t{1} << 40;

[[noreturn]] void bad_realms(const std::string& why) {
  throw UsageError(ErrorCode::invalid_argument, "file realms: " + why);
}

std::int64_t positive_modulo(std::int64_t x, std::int64_t period) {
  const std::int64_t r = x % period;
  return r < 0 ? r + period : r;
}

// The pieces of one copy of `type` (touching pieces merged), refusing more
// than `most`.
std::vector<Piece> pieces_of_one_copy(const FlatType& type, std::int64_t most) {
  std::vector<Piece> pieces;
  PieceCursor cursor(type, 1);
  std::array<Piece, 256> batch;
  while (const std::size_t n = cursor.next(batch, type.size())) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!pieces.empty() && pieces.back().offset + pieces.back().length == batch[i].offset) {
        pieces.back().length += batch[i].length;
      } else {
        pieces.push_back(batch[i]);
      }
    }
    if (static_cast<std::int64_t>(pieces.size()) > most) {
      bad_realms("more than " + std::to_string(RealmTiling::kMostSegments) +
                 " pieces in one period of the realms");
    }
  }
  return pieces;
}

}  // namespace

RealmTiling RealmTiling::stripes(int slots, std::int64_t unit) {
  if (unit < 1) bad_realms("a stripe must hold at least one byte");
  slots = std::max(slots, 1);
  if (unit > kMostPeriod / slots) bad_realms("stripes longer than 2^40 bytes per period");
  std::vector<Segment> segments;
  for (int slot = 0; slot < slots; ++slot) {
    segments.push_back(Segment{slot * unit, (slot + 1) * unit, slot});
  }
  return of_segments(slots, slots * unit, std::move(segments));
}

RealmTiling RealmTiling::of_types(std::span<const RealmType> realms) {
  if (realms.empty()) bad_realms("no realm given");
  if (realms.size() > static_cast<std::size_t>(kMostSegments)) bad_realms("too many realms");
  std::int64_t period = 1;
  for (std::size_t a = 0; a < realms.size(); ++a) {
    const FlatType* type = realms[a].type;
    const std::string which = "the realm type of aggregator " + std::to_string(a);
    if (type == nullptr || type->size() == 0) bad_type(which + " holds no data");
    if (type->extent() <= 0) bad_type(which + " has no positive extent");
    // Copies that overlap or go back would give a byte to the realm twice.
    if (!type->tiles_monotonically()) bad_type(which + ": its copies overlap or go back");
    std::int64_t common = 0;
    if (__builtin_mul_overflow(period / std::gcd(period, type->extent()), type->extent(),
                               &common) ||
        common > kMostPeriod) {
      bad_realms("the realms repeat only after more than 2^40 bytes");
    }
    period = common;
  }
  std::vector<Segment> segments;
  std::int64_t room = kMostSegments;
  for (std::size_t a = 0; a < realms.size(); ++a) {
    const FlatType& type = *realms[a].type;
    const std::int64_t copies = period / type.extent();
    const std::vector<Piece> pieces = pieces_of_one_copy(type, room / copies);
    room -= copies * static_cast<std::int64_t>(pieces.size());
    for (std::int64_t k = 0; k < copies; ++k) {
      const std::int64_t origin =
          positive_modulo(realms[a].displacement, period) + k * type.extent();
      for (const Piece& piece : pieces) {
        // Each piece is at most one extent long, so it wraps at most once.
        const std::int64_t begin = positive_modulo(origin + piece.offset, period);
        const std::int64_t end = begin + piece.length;
        const int slot = static_cast<int>(a);
        if (end <= period) {
          segments.push_back(Segment{begin, end, slot});
        } else {
          segments.push_back(Segment{begin, period, slot});
          segments.push_back(Segment{0, end - period, slot});
        }
      }
    }
  }
  return of_segments(static_cast<int>(realms.size()), period, std::move(segments));
}

RealmTiling RealmTiling::of_first(const RealmType& first, int slots) {
  if (first.type == nullptr) bad_type("no realm type given");
  std::vector<RealmType> realms;
  for (int a = 0; a < std::max(slots, 1); ++a) {
    realms.push_back(RealmType{
        checked_add(first.displacement, checked_multiply(a, first.type->size())), first.type});
  }
  return of_types(realms);
}

RealmTiling RealmTiling::of_segments(int slots, std::int64_t period, std::vector<Segment> pieces) {
  std::sort(pieces.begin(), pieces.end(),
            [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
  RealmTiling tiling;
  tiling.slots_ = slots;
  tiling.period_ = period;
  std::int64_t covered = 0;
  for (const Segment& piece : pieces) {
    if (piece.begin < covered) {
      const Segment& before = tiling.segments_.back();
      bad_realms("byte " + std::to_string(piece.begin) + " of each period of " +
                 std::to_string(period) + " bytes belongs to the realms of aggregators " +
                 std::to_string(before.slot) + " and " + std::to_string(piece.slot));
    }
    if (piece.begin > covered) {
      bad_realms("byte " + std::to_string(covered) + " of each period of " +
                 std::to_string(period) + " bytes belongs to no realm");
    }
    if (!tiling.segments_.empty() && tiling.segments_.back().slot == piece.slot) {
      tiling.segments_.back().end = piece.end;
    } else {
      tiling.segments_.push_back(piece);
    }
    covered = piece.end;
  }
  if (covered < period) {
    bad_realms("byte " + std::to_string(covered) + " of each period of " + std::to_string(period) +
               " bytes belongs to no realm");
  }
  tiling.segments_by_slot_.resize(static_cast<std::size_t>(slots));
  std::uint64_t key = hash_combine(hash_combine(0, static_cast<std::uint64_t>(slots)),
                                   static_cast<std::uint64_t>(period));
  for (std::size_t i = 0; i < tiling.segments_.size(); ++i) {
    const Segment& segment = tiling.segments_[i];
    tiling.segments_by_slot_[static_cast<std::size_t>(segment.slot)].push_back(i);
    key = hash_combine(hash_combine(key, static_cast<std::uint64_t>(segment.end)),
                       static_cast<std::uint64_t>(segment.slot));
  }
  tiling.key_ = key;
  return tiling;
}

RealmTiling RealmDescription::tiling(int slots) const {
  if (one_for_all) return RealmTiling::of_first(RealmType{displacements[0], types[0].get()}, slots);
  if (static_cast<int>(types.size()) != slots) {
    bad_realms(std::to_string(types.size()) + " realms given for " + std::to_string(slots) +
               " aggregators (hints cb_nodes, flowio_aggregators): one realm per aggregator");
  }
  std::vector<RealmType> realms;
  for (std::size_t a = 0; a < types.size(); ++a) {
    realms.push_back(RealmType{displacements[a], types[a].get()});
  }
  return RealmTiling::of_types(realms);
}

std::size_t RealmTiling::segment_at(std::int64_t x) const {
  const std::int64_t within = positive_modulo(x, period_);
  const auto after =
      std::upper_bound(segments_.begin(), segments_.end(), within,
                       [](std::int64_t value, const Segment& s) { return value < s.begin; });
  return static_cast<std::size_t>(after - segments_.begin()) - 1;
}

}  // namespace flowio::core
