// RealmLayout: windows partition the operation's range, each inside one
// slot's realm; (slot, index) names a window uniquely; the slot queries
// agree with a byte-by-byte scan. Checked on hand-made and many small
// random layouts, ranges (with empty realms), stripes and tilings described
// by types (each slot's realm any periodic set of bytes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/flat_type.h"
#include "runtime/core/realm_layout.h"
#include "runtime/core/realm_tiling.h"
#include "tests/support/trials.h"

namespace {

using namespace flowio::core;

std::int64_t positive_modulo(std::int64_t x, std::int64_t period) {
  return ((x % period) + period) % period;
}

// What the layout's constructors promise, byte by byte: which slot owns
// each byte of [begin, end).
struct Model {
  bool striped = false;
  bool tiled = false;
  int slots = 1;
  std::vector<std::int64_t> boundaries;  // ranges
  std::int64_t anchor = 0, unit = 1;     // striped, tiled (anchor)
  // tiled: byte x belongs to period_owner[(x - anchor - phase) mod period],
  // and every slot's realm is a type with the phase as displacement.
  std::vector<int> period_owner;
  std::int64_t phase = 0;
  std::int64_t window_bytes = 1;
  std::int64_t begin = 0, end = 0;

  // Slot `slot`'s realm as a flattened type: its runs of one period.
  FlatType realm_type(int slot) const {
    std::vector<flowio::core::FlatBlock> blocks;
    const auto period = std::ssize(period_owner);
    for (std::int64_t b = 0; b < period;) {
      std::int64_t e = b + 1;
      while (e < period && period_owner[e] == period_owner[b]) ++e;
      if (period_owner[b] == slot) {
        blocks.push_back(flowio::core::FlatBlock{b, 1, 0, flowio::core::make_run(e - b)});
      }
      b = e;
    }
    return FlatType(flowio::core::make_blocks(std::move(blocks)), 0, period);
  }

  RealmLayout build() const {
    if (tiled) {
      std::vector<FlatType> types;
      for (int slot = 0; slot < slots; ++slot) types.push_back(realm_type(slot));
      std::vector<RealmType> realms;
      for (const FlatType& type : types) realms.push_back(RealmType{phase, &type});
      return RealmLayout::tiled(std::make_shared<const RealmTiling>(RealmTiling::of_types(realms)),
                                anchor, window_bytes, begin, end);
    }
    return striped ? RealmLayout::striped(slots, anchor, unit, window_bytes, begin, end)
                   : RealmLayout::ranges(boundaries, window_bytes);
  }

  int owner(std::int64_t x) const {
    if (tiled) {
      return period_owner[static_cast<std::size_t>(
          positive_modulo(x - anchor - phase, std::ssize(period_owner)))];
    }
    if (striped) return static_cast<int>(((x - anchor) / unit) % slots);
    for (int slot = 0; slot < slots; ++slot) {
      if (boundaries[slot] <= x && x < boundaries[slot + 1]) return slot;
    }
    return -1;
  }

  std::string describe() const {
    std::string text;
    if (tiled) {
      text = "tiled anchor " + std::to_string(anchor) + " phase " + std::to_string(phase) +
             " period owners";
      for (int slot : period_owner) text += " " + std::to_string(slot);
    } else if (striped) {
      text = "striped slots " + std::to_string(slots) + " anchor " + std::to_string(anchor) +
             " unit " + std::to_string(unit);
    } else {
      text = "ranges boundaries";
      for (std::int64_t b : boundaries) text += " " + std::to_string(b);
    }
    return text + " window_bytes " + std::to_string(window_bytes) + " range [" +
           std::to_string(begin) + ", " + std::to_string(end) + ")";
  }
};

std::string show(const Window& w) {
  return "slot " + std::to_string(w.slot) + " index " + std::to_string(w.index) + " [" +
         std::to_string(w.begin) + ", " + std::to_string(w.end) + ")";
}

std::string show(const std::optional<Window>& w) { return w ? show(*w) : "none"; }

bool same(const Window& a, const Window& b) {
  return a.slot == b.slot && a.index == b.index && a.begin == b.begin && a.end == b.end;
}

bool same(const std::optional<Window>& a, const std::optional<Window>& b) {
  return a.has_value() == b.has_value() && (!a || same(*a, *b));
}

Model random_ranges(std::mt19937_64& rng) {
  Model model;
  model.slots = static_cast<int>(rng() % 6) + 1;
  model.boundaries.push_back(static_cast<std::int64_t>(rng() % 40));
  const bool all_empty = rng() % 20 == 0;
  for (int slot = 0; slot < model.slots; ++slot) {
    const bool empty = all_empty || rng() % 4 == 0;
    model.boundaries.push_back(model.boundaries.back() +
                               (empty ? 0 : static_cast<std::int64_t>(rng() % 60) + 1));
  }
  model.window_bytes = rng() % 8 == 0 ? 1000 : static_cast<std::int64_t>(rng() % 40) + 1;
  model.begin = model.boundaries.front();
  model.end = model.boundaries.back();
  return model;
}

Model random_stripes(std::mt19937_64& rng) {
  Model model;
  model.striped = true;
  model.slots = static_cast<int>(rng() % 5) + 1;
  model.anchor = static_cast<std::int64_t>(rng() % 20);
  model.unit = static_cast<std::int64_t>(rng() % 30) + 1;
  model.window_bytes = rng() % 8 == 0 ? 1000 : static_cast<std::int64_t>(rng() % 40) + 1;
  model.begin = model.anchor + (rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 80));
  model.end = model.begin + (rng() % 20 == 0 ? 0 : static_cast<std::int64_t>(rng() % 250) + 1);
  return model;
}

// A random periodic partition: runs of random length dealt to random
// slots, the slots that got none left out, over random ranges above the
// anchor.
Model random_tiling(std::mt19937_64& rng) {
  Model model;
  model.tiled = true;
  const int drawn_slots = static_cast<int>(rng() % 5) + 1;
  const auto period = static_cast<std::int64_t>(rng() % 60) + 1;
  while (std::ssize(model.period_owner) < period) {
    const int slot = static_cast<int>(rng() % static_cast<std::uint64_t>(drawn_slots));
    const auto run = static_cast<std::int64_t>(rng() % (rng() % 2 == 0 ? 3 : 15)) + 1;
    for (std::int64_t i = 0; i < run && std::ssize(model.period_owner) < period; ++i) {
      model.period_owner.push_back(slot);
    }
  }
  // Slots numbered in order of first appearance, none without bytes.
  std::map<int, int> renamed;
  for (int& slot : model.period_owner) {
    slot = renamed.emplace(slot, static_cast<int>(renamed.size())).first->second;
  }
  model.slots = static_cast<int>(renamed.size());
  model.phase = static_cast<std::int64_t>(rng() % 200) - 100;
  model.anchor = rng() % 2 == 0 ? 0 : static_cast<std::int64_t>(rng() % 20);
  model.window_bytes = rng() % 8 == 0 ? 1000 : static_cast<std::int64_t>(rng() % 12) + 1;
  model.begin = model.anchor + (rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 80));
  model.end = model.begin + (rng() % 20 == 0 ? 0 : static_cast<std::int64_t>(rng() % 250) + 1);
  return model;
}

// The windows of each slot in file order, found by window_at over every
// byte, after checking that they partition [begin, end): every byte lies
// in its window, a window holds at most window_bytes bytes of its slot's
// realm inside [begin, end), and (slot, index) names one window only.
// Indices grow along a slot's windows; they count from 0 where the range
// starts at the realms' start (always for ranges, at the anchor for
// stripes).
std::string check_windows(const Model& model, const RealmLayout& layout,
                          std::vector<std::vector<Window>>& windows) {
  windows.assign(static_cast<std::size_t>(model.slots), {});
  std::map<std::pair<int, std::int64_t>, std::pair<std::int64_t, std::int64_t>> named;
  std::optional<Window> current;
  for (std::int64_t x = model.begin; x < model.end; ++x) {
    const Window w = layout.window_at(x);
    const std::string at = "window_at(" + std::to_string(x) + ") = " + show(w);
    if (!(w.begin <= x && x < w.end)) return at + ": does not hold the byte";
    if (w.end - w.begin > model.window_bytes) return at + ": longer than window_bytes";
    if (w.begin < model.begin || w.end > model.end) return at + ": outside the range";
    if (w.slot != model.owner(x)) {
      return at + ": the byte belongs to slot " + std::to_string(model.owner(x));
    }
    if (current && x < current->end) {
      if (!same(w, *current)) return at + ": the byte also lies in " + show(*current);
      continue;
    }
    if (w.begin != x)
      return at + ": windows overlap (the previous one ended at " + std::to_string(x) + ")";
    current = w;
    if (!named.emplace(std::pair(w.slot, w.index), std::pair(w.begin, w.end)).second) {
      const auto& other = named[std::pair(w.slot, w.index)];
      return at + ": the same slot and index name [" + std::to_string(other.first) + ", " +
             std::to_string(other.second) + ")";
    }
    std::vector<Window>& of_slot = windows[static_cast<std::size_t>(w.slot)];
    if (!of_slot.empty() && w.index <= of_slot.back().index) {
      return at + ": index not above that of the slot's previous window " + show(of_slot.back());
    }
    const bool from_anchor = !(model.striped || model.tiled) || model.begin == model.anchor;
    if (from_anchor && w.index != std::ssize(of_slot)) {
      return at + ": window " + std::to_string(of_slot.size()) + " of its realm";
    }
    of_slot.push_back(w);
  }
  return "";
}

// window_of_slot_from against a scan of the slot's windows, and its
// "none" against a scan of the bytes the slot owns.
std::string check_window_of_slot_from(const Model& model, const RealmLayout& layout,
                                      const std::vector<std::vector<Window>>& windows) {
  for (int slot = 0; slot < model.slots; ++slot) {
    for (std::int64_t x = model.begin - 3; x <= model.end + 3; ++x) {
      std::optional<Window> expected;
      for (const Window& w : windows[static_cast<std::size_t>(slot)]) {
        if (w.end > x) {
          expected = w;
          break;
        }
      }
      const std::optional<Window> got = layout.window_of_slot_from(slot, x);
      const std::string at =
          "window_of_slot_from(" + std::to_string(slot) + ", " + std::to_string(x) + ")";
      if (!same(got, expected)) return at + " = " + show(got) + ", expected " + show(expected);
      bool owns = false;
      for (std::int64_t y = std::max(x, model.begin); y < model.end && !owns; ++y) {
        owns = model.owner(y) == slot;
      }
      if (got.has_value() != owns) {
        return at + " = " + show(got) + " but the slot " + (owns ? "owns" : "owns no") +
               " bytes from there";
      }
    }
  }
  return "";
}

// realm_meets against a count of the slot's bytes in [from, to).
std::string check_realm_meets(const Model& model, const RealmLayout& layout, std::mt19937_64& rng) {
  const std::int64_t low = model.begin - 2, high = model.end + 2;
  // owned[slot][i]: bytes of the slot in [low, low + i).
  std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(model.slots),
                                               std::vector<std::int64_t>(1, 0));
  for (std::int64_t y = low; y < high; ++y) {
    for (int slot = 0; slot < model.slots; ++slot) {
      const bool mine = y >= model.begin && y < model.end && model.owner(y) == slot;
      owned[static_cast<std::size_t>(slot)].push_back(owned[static_cast<std::size_t>(slot)].back() +
                                                      (mine ? 1 : 0));
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (high - low <= 70) {
    for (std::int64_t from = low; from <= high; ++from) {
      for (std::int64_t to = low; to <= high; ++to) ranges.emplace_back(from, to);
    }
  } else {
    std::uniform_int_distribution<std::int64_t> any(low, high);
    for (int i = 0; i < 3000; ++i) {
      const std::int64_t from = any(rng);
      // Mostly short ranges, where meeting or not is in doubt.
      const std::int64_t to =
          rng() % 2 == 0 ? any(rng) : std::min(high, from + static_cast<std::int64_t>(rng() % 12));
      ranges.emplace_back(from, to);
    }
  }
  for (const auto& [from, to] : ranges) {
    for (int slot = 0; slot < model.slots; ++slot) {
      const auto& count = owned[static_cast<std::size_t>(slot)];
      const bool expected = from < to && count[static_cast<std::size_t>(to - low)] >
                                             count[static_cast<std::size_t>(from - low)];
      if (layout.realm_meets(slot, from, to) != expected) {
        return "realm_meets(" + std::to_string(slot) + ", " + std::to_string(from) + ", " +
               std::to_string(to) + ") = " + (expected ? "false" : "true");
      }
    }
  }
  return "";
}

void check_layout(const Model& model, std::mt19937_64& rng) {
  CAPTURE(model.describe());
  const RealmLayout layout = model.build();
  CHECK(layout.slots() == model.slots);
  CHECK(layout.begin() == model.begin);
  CHECK(layout.end() == model.end);
  std::vector<std::vector<Window>> windows;
  const std::string partition = check_windows(model, layout, windows);
  CHECK(partition == "");
  if (!partition.empty()) return;
  CHECK(check_window_of_slot_from(model, layout, windows) == "");
  CHECK(check_realm_meets(model, layout, rng) == "");
}

}  // namespace

// Ranges with an empty realm in the middle, checked by hand.
TEST_CASE("Core.RealmLayout.RangesByHand") {
  const RealmLayout layout = RealmLayout::ranges({0, 10, 10, 25}, 4);
  CHECK(layout.slots() == 3);
  CHECK(same(layout.window_at(9), Window{0, 2, 8, 10}));
  CHECK(same(layout.window_at(10), Window{2, 0, 10, 14}));
  CHECK(same(layout.window_at(24), Window{2, 3, 22, 25}));
  CHECK_FALSE(layout.window_of_slot_from(1, 0).has_value());
  CHECK_FALSE(layout.realm_meets(1, 0, 100));
  CHECK(same(layout.window_of_slot_from(2, 3), Window{2, 0, 10, 14}));
  CHECK(same(layout.window_of_slot_from(2, 13), Window{2, 0, 10, 14}));
  CHECK(same(layout.window_of_slot_from(2, 14), Window{2, 1, 14, 18}));
  CHECK_FALSE(layout.window_of_slot_from(0, 10).has_value());
  CHECK(layout.realm_meets(0, 9, 11));
  CHECK_FALSE(layout.realm_meets(0, 10, 30));
}

// Stripes dealt from an anchor below the range, checked by hand: the
// first window is clipped but keeps its index.
TEST_CASE("Core.RealmLayout.StripesByHand") {
  const RealmLayout layout = RealmLayout::striped(3, 0, 10, 4, 5, 65);
  CHECK(same(layout.window_at(5), Window{0, 1, 5, 8}));
  CHECK(same(layout.window_at(9), Window{0, 2, 8, 10}));
  CHECK(same(layout.window_at(30), Window{0, 3, 30, 34}));
  CHECK(same(layout.window_at(64), Window{0, 7, 64, 65}));
  CHECK(same(layout.window_of_slot_from(2, 0), Window{2, 0, 20, 24}));
  CHECK(same(layout.window_of_slot_from(1, 19), Window{1, 2, 18, 20}));
  CHECK(same(layout.window_of_slot_from(1, 20), Window{1, 3, 40, 44}));
  CHECK(same(layout.window_of_slot_from(2, 51), Window{2, 3, 50, 54}));
  CHECK_FALSE(layout.window_of_slot_from(2, 60).has_value());
  CHECK_FALSE(layout.realm_meets(1, 20, 40));
  CHECK(layout.realm_meets(1, 20, 41));
}

// Random range layouts, some realms empty, some all empty.
TEST_CASE("Core.RealmLayout.RandomRanges") {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < flowio::testing::trials(1500); ++trial)
    check_layout(random_ranges(rng), rng);
}

// Random striped layouts over random ranges above the anchor.
TEST_CASE("Core.RealmLayout.RandomStripes") {
  std::mt19937_64 rng(22);
  for (int trial = 0; trial < flowio::testing::trials(1500); ++trial)
    check_layout(random_stripes(rng), rng);
}

// Random tilings described by types (any periodic partition, any phase),
// over random ranges above the anchor.
TEST_CASE("Core.RealmLayout.RandomTilings") {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < flowio::testing::trials(400); ++trial)
    check_layout(random_tiling(rng), rng);
}
