// Realm policies: summaries of accesses, and the layouts plan_realms makes
// from them: even and aligned ranges cover the accessed region, persistent
// stripes keep their first unit and are anchored at byte 0, load-balanced
// ranges hold about equal data. Accesses are explicit piece lists, so no
// MPI datatype is involved.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/access.h"
#include "runtime/core/realm_layout.h"
#include "runtime/core/realm_policy.h"

namespace {

using namespace flowio::core;

// Random sorted pieces from `start`, `count` of them, gaps and lengths
// drawn from the given ranges.
std::vector<Piece> random_pieces(std::mt19937_64& rng, std::int64_t start, int count,
                                 std::int64_t max_gap, std::int64_t max_length) {
  std::vector<Piece> pieces;
  std::int64_t offset = start;
  for (int i = 0; i < count; ++i) {
    offset += static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_gap + 1));
    const std::int64_t length =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_length)) + 1;
    pieces.push_back(Piece{offset, length});
    offset += length;
  }
  return pieces;
}

std::vector<AccessSummary> summaries_of(const std::vector<std::vector<Piece>>& processes) {
  std::vector<AccessSummary> summaries;
  for (const auto& pieces : processes) summaries.push_back(AccessSummary::of(Access(pieces)));
  return summaries;
}

struct Extent {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = 0;

  // One of `slots` equal shares of the extent, rounded up.
  std::int64_t share(int slots) const { return (end - begin + slots - 1) / slots; }
};

Extent extent_of(const std::vector<std::vector<Piece>>& processes) {
  Extent extent;
  for (const auto& pieces : processes) {
    if (pieces.empty()) continue;
    extent.begin = std::min(extent.begin, pieces.front().offset);
    extent.end = std::max(extent.end, pieces.back().offset + pieces.back().length);
  }
  return extent;
}

// The boundaries of a range layout, read back through its queries: the
// windows of each slot, walked with window_of_slot_from, must form one
// range, and the nonempty ranges, in slot order, must tile [begin, end).
// Returns "" and fills `boundaries` (slots + 1 of them), or says what is
// wrong.
std::string read_boundaries(const RealmLayout& layout, std::vector<std::int64_t>& boundaries) {
  boundaries.assign(1, layout.begin());
  for (int slot = 0; slot < layout.slots(); ++slot) {
    const std::string which = "slot " + std::to_string(slot);
    std::optional<Window> window = layout.window_of_slot_from(slot, layout.begin());
    if (!window) {
      boundaries.push_back(boundaries.back());
      continue;
    }
    if (window->begin != boundaries.back()) {
      return which + " starts at " + std::to_string(window->begin) + ", not where slot " +
             std::to_string(slot - 1) + " ends (" + std::to_string(boundaries.back()) + ")";
    }
    std::int64_t end = window->end;
    for (window = layout.window_of_slot_from(slot, end); window;
         window = layout.window_of_slot_from(slot, end)) {
      if (window->begin != end) {
        return which + " is not one range: a window at " + std::to_string(window->begin) +
               " after one ending at " + std::to_string(end);
      }
      end = window->end;
    }
    boundaries.push_back(end);
  }
  if (boundaries.back() != layout.end()) {
    return "the realms end at " + std::to_string(boundaries.back()) + ", not at " +
           std::to_string(layout.end());
  }
  return "";
}

// The boundaries of `layout` (read_boundaries), which must span exactly
// `extent`.
std::vector<std::int64_t> boundaries_over(const RealmLayout& layout, const Extent& extent) {
  CHECK(layout.begin() == extent.begin);
  CHECK(layout.end() == extent.end);
  std::vector<std::int64_t> boundaries;
  REQUIRE(read_boundaries(layout, boundaries) == "");
  return boundaries;
}

// Data bytes of the processes in [from, to), counted piece by piece.
std::int64_t bytes_in(const std::vector<std::vector<Piece>>& processes, std::int64_t from,
                      std::int64_t to) {
  std::int64_t bytes = 0;
  for (const auto& pieces : processes) {
    for (const Piece& piece : pieces) {
      bytes += std::max<std::int64_t>(
          0, std::min(to, piece.offset + piece.length) - std::max(from, piece.offset));
    }
  }
  return bytes;
}

std::string show(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::int64_t v : values) text += " " + std::to_string(v);
  return text;
}

// Processes with random extents, about one in four of them empty (but not
// all), for the policies that only look at extents.
std::vector<std::vector<Piece>> random_processes(std::mt19937_64& rng) {
  std::vector<std::vector<Piece>> processes(rng() % 5 + 1);
  for (auto& pieces : processes) {
    if (rng() % 4 == 0) continue;
    pieces = random_pieces(rng, static_cast<std::int64_t>(rng() % 1000000),
                           static_cast<int>(rng() % 20) + 1, 50000, 20000);
  }
  if (extent_of(processes).end == 0) processes[0] = random_pieces(rng, 777, 3, 100, 100);
  return processes;
}

}  // namespace

// Policy names parse to their policy and back; anything else is a
// UsageError(invalid_argument).
TEST_CASE("Core.RealmPolicy.ParseNames") {
  for (RealmPolicy policy : {RealmPolicy::even, RealmPolicy::aligned, RealmPolicy::persistent,
                             RealmPolicy::load_balanced}) {
    CHECK(flowio::core::parse_realm_policy(flowio::core::realm_policy_name(policy)) == policy);
  }
  CHECK(flowio::core::parse_realm_policy("load_balanced") == RealmPolicy::load_balanced);
  for (const char* bad : {"", "Even", "even ", "load-balanced", "balanced", "striped"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(flowio::core::parse_realm_policy(bad), flowio::UsageError);
    try {
      flowio::core::parse_realm_policy(bad);
    } catch (const flowio::UsageError& error) {
      CHECK(error.code() == flowio::ErrorCode::invalid_argument);
    }
  }
}

// A summary holds the access's extent, bytes, piece count, and the offset
// of data byte k * bytes / kQuantiles as quantile k.
TEST_CASE("Core.RealmPolicy.SummaryOf") {
  const AccessSummary empty = AccessSummary::of(Access());
  CHECK(empty.bytes == 0);
  CHECK(empty.file_begin == 0);
  CHECK(empty.file_end == 0);
  CHECK(empty.pieces == 0);

  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 200; ++trial) {
    // From 1 byte (fewer bytes than quantiles) to thousands.
    const auto pieces =
        random_pieces(rng, static_cast<std::int64_t>(rng() % 500), static_cast<int>(rng() % 30) + 1,
                      40, trial % 2 == 0 ? 1 : 200);
    std::vector<std::int64_t> data;
    for (const Piece& piece : pieces) {
      for (std::int64_t i = 0; i < piece.length; ++i) data.push_back(piece.offset + i);
    }
    const auto bytes = static_cast<std::int64_t>(data.size());
    const AccessSummary summary = AccessSummary::of(Access(pieces));
    CHECK(summary.bytes == bytes);
    CHECK(summary.file_begin == data.front());
    CHECK(summary.file_end == data.back() + 1);
    CHECK(summary.pieces == std::ssize(pieces));
    std::vector<std::int64_t> expected(AccessSummary::kQuantiles + 1);
    for (int k = 0; k < AccessSummary::kQuantiles; ++k) {
      expected[k] = data[static_cast<std::size_t>(k * bytes / AccessSummary::kQuantiles)];
    }
    expected[AccessSummary::kQuantiles] = data.back() + 1;
    CHECK(std::vector<std::int64_t>(summary.quantile.begin(), summary.quantile.end()) == expected);
  }
}

// Even ranges tile [min begin, max end) of the nonempty accesses, in slot
// order, none longer than an equal share (rounded up).
TEST_CASE("Core.RealmPolicy.EvenCoversTheRegion") {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 300; ++trial) {
    const auto processes = random_processes(rng);
    const Extent extent = extent_of(processes);
    RealmSettings settings;
    settings.policy = RealmPolicy::even;
    settings.slots = static_cast<int>(rng() % 8) + 1;
    settings.window_bytes = rng() % 2 == 0 ? 4096 : 16 << 20;
    std::optional<std::int64_t> unit;
    const auto summaries = summaries_of(processes);
    const RealmLayout layout = plan_realms(settings, summaries, unit);
    CAPTURE(settings.slots);
    CHECK(layout.slots() == settings.slots);
    const std::vector<std::int64_t> boundaries = boundaries_over(layout, extent);
    CAPTURE(show(boundaries));
    const std::int64_t share = extent.share(settings.slots);
    for (int slot = 0; slot < settings.slots; ++slot) {
      CHECK(boundaries[slot + 1] - boundaries[slot] <= share);
    }
    CHECK_FALSE(unit.has_value());
  }
}

// Aligned ranges tile the region too; every boundary inside it is a
// multiple of the alignment, and no range exceeds a share by an alignment.
TEST_CASE("Core.RealmPolicy.AlignedBoundaries") {
  std::mt19937_64 rng(33);
  const std::int64_t alignments[] = {1, 7, 512, 4096, 65536, 1 << 20};
  for (int trial = 0; trial < 300; ++trial) {
    const auto processes = random_processes(rng);
    const Extent extent = extent_of(processes);
    RealmSettings settings;
    settings.policy = RealmPolicy::aligned;
    settings.slots = static_cast<int>(rng() % 8) + 1;
    settings.alignment = alignments[rng() % std::size(alignments)];
    settings.window_bytes = 1 << 16;
    std::optional<std::int64_t> unit;
    const RealmLayout layout = plan_realms(settings, summaries_of(processes), unit);
    CAPTURE(settings.slots);
    CAPTURE(settings.alignment);
    const std::vector<std::int64_t> boundaries = boundaries_over(layout, extent);
    CAPTURE(show(boundaries));
    const std::int64_t share = extent.share(settings.slots);
    for (int slot = 0; slot < settings.slots; ++slot) {
      const std::int64_t b = boundaries[slot + 1];
      CHECK((b % settings.alignment == 0 || b == extent.begin || b == extent.end));
      CHECK(b - boundaries[slot] <= share + settings.alignment);
    }
  }
}

// Persistent stripes: the first operation fixes the unit (a multiple of
// the alignment) and later ones keep it even when their accesses would
// give another; stripe k of the file from byte 0 belongs to slot
// k % slots, whatever the operation's begin.
TEST_CASE("Core.RealmPolicy.PersistentKeepsItsUnit") {
  RealmSettings settings;
  settings.policy = RealmPolicy::persistent;
  settings.slots = 4;
  settings.alignment = 4096;
  settings.window_bytes = 1000;
  const std::vector<std::vector<Piece>> first = {{{5000, 30000}}, {{20000, 15000}}};
  const std::vector<std::vector<Piece>> second = {{{3'000'000, 9'000'000}}, {}};

  std::optional<std::int64_t> unit;
  const RealmLayout a = plan_realms(settings, summaries_of(first), unit);
  REQUIRE(unit.has_value());
  const std::int64_t fixed = *unit;
  CHECK(fixed > 0);
  CHECK(fixed % settings.alignment == 0);
  CHECK(a.begin() == 5000);
  CHECK(a.end() == 35000);

  // What the second operation would get on its own: another unit, or the
  // check below would not show that the first one is kept.
  std::optional<std::int64_t> fresh;
  plan_realms(settings, summaries_of(second), fresh);
  REQUIRE(fresh.has_value());
  CHECK(*fresh != fixed);

  const RealmLayout b = plan_realms(settings, summaries_of(second), unit);
  CHECK(unit == fixed);
  CHECK(b.begin() == 3'000'000);
  CHECK(b.end() == 12'000'000);

  std::mt19937_64 rng(34);
  for (const RealmLayout* layout : {&a, &b}) {
    for (int probe = 0; probe < 2000; ++probe) {
      const std::int64_t x =
          layout->begin() + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(
                                                                  layout->end() - layout->begin()));
      const Window w = layout->window_at(x);
      CAPTURE(x);
      CHECK(w.slot == (x / fixed) % settings.slots);
      // A window never crosses a stripe.
      CHECK(w.begin / fixed == (w.end - 1) / fixed);
    }
  }

  // A unit set beforehand is used as it is.
  std::optional<std::int64_t> preset = 777;
  const RealmLayout c = plan_realms(settings, summaries_of(first), preset);
  CHECK(preset == 777);
  for (std::int64_t x = c.begin(); x < c.end(); x += 97) {
    CHECK(c.window_at(x).slot == (x / 777) % settings.slots);
  }
}

// Random persistent plans: unit a multiple of the alignment, stripes from
// byte 0, and the second plan reuses the unit.
TEST_CASE("Core.RealmPolicy.PersistentRandom") {
  std::mt19937_64 rng(35);
  const std::int64_t alignments[] = {0, 1, 512, 1000, 4096};
  for (int trial = 0; trial < 200; ++trial) {
    RealmSettings settings;
    settings.policy = RealmPolicy::persistent;
    settings.slots = static_cast<int>(rng() % 6) + 1;
    settings.alignment = alignments[rng() % std::size(alignments)];
    settings.window_bytes = static_cast<std::int64_t>(rng() % 100000) + 1;
    CAPTURE(settings.slots);
    CAPTURE(settings.alignment);
    std::optional<std::int64_t> unit;
    plan_realms(settings, summaries_of(random_processes(rng)), unit);
    REQUIRE(unit.has_value());
    const std::int64_t fixed = *unit;
    CHECK(fixed > 0);
    if (settings.alignment > 0) CHECK(fixed % settings.alignment == 0);
    const auto processes = random_processes(rng);
    const Extent extent = extent_of(processes);
    const RealmLayout layout = plan_realms(settings, summaries_of(processes), unit);
    CHECK(unit == fixed);
    CHECK(layout.begin() == extent.begin);
    CHECK(layout.end() == extent.end);
    for (int probe = 0; probe < 50; ++probe) {
      const std::int64_t x =
          extent.begin +
          static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(extent.end - extent.begin));
      CHECK(layout.window_at(x).slot == (x / fixed) % settings.slots);
    }
  }
}

// Load-balanced ranges hold about equal shares of the data even where its
// density changes a hundredfold. Each boundary is placed by interpolating
// between quantiles, which can miss by the bytes of one quantile of every
// process (and a byte per process for rounding); a realm has two
// boundaries, hence the tolerance of 10% of a share plus two quantiles.
TEST_CASE("Core.RealmPolicy.LoadBalancedEqualShares") {
  std::mt19937_64 rng(36);
  for (int trial = 0; trial < 100; ++trial) {
    // Dense pieces over the first tenth, sparse ones after; one process
    // may be empty.
    std::vector<std::vector<Piece>> processes(rng() % 4 + 1);
    for (std::size_t p = 0; p < processes.size(); ++p) {
      if (p == 1 && rng() % 3 == 0) continue;
      const std::int64_t start = static_cast<std::int64_t>(rng() % 5000);
      auto pieces = random_pieces(rng, start, 300, 20, 100);
      const std::int64_t dense_end = pieces.back().offset + pieces.back().length;
      for (const Piece& piece : random_pieces(rng, dense_end, 200, 3000, 10)) {
        pieces.push_back(piece);
      }
      processes[p] = std::move(pieces);
    }
    RealmSettings settings;
    settings.policy = RealmPolicy::load_balanced;
    settings.slots = static_cast<int>(rng() % 7) + 2;
    settings.window_bytes = rng() % 2 == 0 ? 8192 : 16 << 20;
    const auto summaries = summaries_of(processes);
    std::optional<std::int64_t> unit;
    const RealmLayout layout = plan_realms(settings, summaries, unit);
    const Extent extent = extent_of(processes);
    const std::vector<std::int64_t> boundaries = boundaries_over(layout, extent);

    const std::int64_t total = bytes_in(processes, extent.begin, extent.end);
    std::int64_t quantile = 0;
    for (const AccessSummary& s : summaries) {
      quantile += (s.bytes + AccessSummary::kQuantiles - 1) / AccessSummary::kQuantiles + 1;
    }
    const double share = static_cast<double>(total) / settings.slots;
    const double tolerance = 0.1 * share + 2.0 * static_cast<double>(quantile);
    std::vector<std::int64_t> realm_bytes;
    double worst = 0;
    for (int slot = 0; slot < settings.slots; ++slot) {
      realm_bytes.push_back(bytes_in(processes, boundaries[slot], boundaries[slot + 1]));
      worst = std::max(worst, std::abs(static_cast<double>(realm_bytes.back()) - share));
    }
    CAPTURE(settings.slots);
    CAPTURE(share);
    CAPTURE(tolerance);
    CAPTURE(show(boundaries));
    CAPTURE(show(realm_bytes));
    CHECK(worst <= tolerance);

    // The data is uneven enough that equal ranges would miss by more.
    const std::int64_t width = (extent.end - extent.begin) / settings.slots;
    const double equal_ranges_miss = std::abs(
        static_cast<double>(bytes_in(processes, extent.begin, extent.begin + width)) - share);
    CHECK(equal_ranges_miss > tolerance);
  }
}
