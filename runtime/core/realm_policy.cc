#include "runtime/core/realm_policy.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/value_names.h"

namespace flowio::core {

namespace {

constexpr ValueName<RealmPolicy> kRealmPolicyNames[] = {
    {RealmPolicy::even, "even"},
    {RealmPolicy::aligned, "aligned"},
    {RealmPolicy::persistent, "persistent"},
    {RealmPolicy::load_balanced, "load_balanced"},
    {RealmPolicy::datatype, "datatype"}};

}  // namespace

RealmPolicy parse_realm_policy(const std::string& name) {
  return value_named(kRealmPolicyNames, name, "flowio_realm_policy");
}

const char* realm_policy_name(RealmPolicy policy) { return name_of(kRealmPolicyNames, policy); }

AccessSummary AccessSummary::of(const Access& access, bool quantiles) {
  AccessSummary summary;
  summary.file_begin = access.file_begin();
  summary.file_end = access.file_end();
  summary.bytes = access.bytes();
  summary.pieces = access.estimated_pieces();
  for (int k = 0; quantiles && k < kQuantiles; ++k) {
    summary.quantile[k] = access.empty() ? 0 : access.offset_of(k * access.bytes() / kQuantiles);
  }
  summary.quantile[kQuantiles] = access.file_end();
  return summary;
}

namespace {

std::int64_t round_down(std::int64_t x, std::int64_t alignment) {
  return alignment > 0 ? x / alignment * alignment : x;
}

std::int64_t round_up(std::int64_t x, std::int64_t alignment) {
  return alignment > 0 ? (x + alignment - 1) / alignment * alignment : x;
}

// Data bytes of one process below file offset x, interpolated linearly
// between its quantiles.
double estimated_bytes_below(const AccessSummary& s, std::int64_t x) {
  if (s.bytes == 0 || x <= s.file_begin) return 0;
  if (x >= s.file_end) return static_cast<double>(s.bytes);
  const int n = AccessSummary::kQuantiles;
  const auto it = std::upper_bound(s.quantile.begin(), s.quantile.end(), x);
  const int k = static_cast<int>(it - s.quantile.begin()) - 1;
  const double low = static_cast<double>(k) * static_cast<double>(s.bytes) / n;
  const double high = static_cast<double>(k + 1) * static_cast<double>(s.bytes) / n;
  const double span = static_cast<double>(s.quantile[k + 1] - s.quantile[k]);
  const double part = span > 0 ? static_cast<double>(x - s.quantile[k]) / span : 1.0;
  return low + (high - low) * part;
}

std::vector<std::int64_t> even_boundaries(std::int64_t begin, std::int64_t end, int slots,
                                          std::int64_t alignment) {
  const std::int64_t share = (end - begin + slots - 1) / slots;
  std::vector<std::int64_t> boundaries(slots + 1);
  boundaries[0] = begin;
  for (int i = 1; i < slots; ++i) {
    boundaries[i] = std::clamp(round_down(begin + i * share, alignment), boundaries[i - 1], end);
  }
  boundaries[slots] = end;
  return boundaries;
}

std::vector<std::int64_t> balanced_boundaries(std::span<const AccessSummary> summaries,
                                              std::int64_t begin, std::int64_t end, int slots) {
  double total = 0;
  for (const AccessSummary& s : summaries) total += static_cast<double>(s.bytes);
  std::vector<std::int64_t> boundaries(slots + 1);
  boundaries[0] = begin;
  for (int i = 1; i < slots; ++i) {
    const double target = total * i / slots;
    std::int64_t low = boundaries[i - 1], high = end;
    while (low < high) {  // the least x with target bytes below it
      const std::int64_t middle = low + (high - low) / 2;
      double below = 0;
      for (const AccessSummary& s : summaries) below += estimated_bytes_below(s, middle);
      if (below < target) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    boundaries[i] = low;
  }
  boundaries[slots] = end;
  return boundaries;
}

}  // namespace

RealmLayout plan_realms(const RealmSettings& settings, std::span<const AccessSummary> summaries,
                        std::optional<std::int64_t>& persistent_unit) {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max(), end = 0;
  for (const AccessSummary& s : summaries) {
    if (s.bytes == 0) continue;
    begin = std::min(begin, s.file_begin);
    end = std::max(end, s.file_end);
  }
  const int slots = std::max(settings.slots, 1);
  switch (settings.policy) {
    case RealmPolicy::even:
      return RealmLayout::ranges(even_boundaries(begin, end, slots, 0), settings.window_bytes);
    case RealmPolicy::aligned:
      return RealmLayout::ranges(even_boundaries(begin, end, slots, settings.alignment),
                                 settings.window_bytes);
    case RealmPolicy::load_balanced:
      return RealmLayout::ranges(balanced_boundaries(summaries, begin, end, slots),
                                 settings.window_bytes);
    case RealmPolicy::persistent:
      if (!persistent_unit) {
        const std::int64_t alignment = settings.alignment > 0 ? settings.alignment : 4096;
        persistent_unit = std::max(alignment, round_up((end + slots - 1) / slots, alignment));
      }
      return RealmLayout::striped(slots, 0, *persistent_unit, settings.window_bytes, begin, end);
    case RealmPolicy::datatype:
      return RealmLayout::tiled(settings.tiling, 0, settings.window_bytes, begin, end);
  }
  return RealmLayout::ranges({begin, end}, settings.window_bytes);
}

}  // namespace flowio::core
