// Realm policies: how the aggregate access region of a collective
// operation is divided among the aggregators. Every process computes the
// same layout from the same gathered summaries, so no further message is
// needed to agree on it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/core/access.h"
#include "runtime/core/realm_layout.h"

namespace flowio::core {

enum class RealmPolicy {
  even,           // the region [min, max) split into equal ranges
  aligned,        // equal ranges with boundaries on multiples of an alignment
  persistent,     // stripes anchored at byte 0, fixed at the first operation
  load_balanced,  // ranges holding equal shares of the data bytes
  datatype,       // realms described by datatypes (realm_tiling.h), fixed for the file
};

// Parses "even", "aligned", "persistent", "load_balanced", "datatype";
// throws UsageError(invalid_argument) for anything else.
RealmPolicy parse_realm_policy(const std::string& name);
const char* realm_policy_name(RealmPolicy policy);

// What one process tells the others about its access before the
// operation: its extent, its bytes, and where its data's quantiles fall
// (for load balancing). Fixed size, so one MPI_Allgather carries it.
struct AccessSummary {
  static constexpr int kQuantiles = 32;
  std::int64_t file_begin = 0;
  std::int64_t file_end = 0;
  std::int64_t bytes = 0;
  std::int64_t pieces = 0;  // Access::estimated_pieces()
  // Words of the largest access description this process will send an
  // aggregator (filled in by the metadata layer), so receivers can size
  // their buffers without asking.
  std::int64_t metadata_words = 0;
  // quantile[k]: file offset of data byte k * bytes / kQuantiles
  // (quantile[kQuantiles] = file_end). Last, so that a message may leave
  // them out when they were not computed.
  std::array<std::int64_t, kQuantiles + 1> quantile{};

  // The quantiles cost a seek each; without `quantiles` they are left 0
  // (only load-balanced realms read them).
  static AccessSummary of(const Access& access, bool quantiles = true);
};

struct RealmSettings {
  RealmPolicy policy = RealmPolicy::even;
  int slots = 1;
  std::int64_t alignment = 0;  // aligned and persistent: round boundaries to this (0: none)
  std::int64_t window_bytes = 16 << 20;
  // datatype: the realms, for `slots` slots (never null with that policy).
  std::shared_ptr<const RealmTiling> tiling;
};

// The layout for processes whose summaries are `summaries`, which must
// not all be empty. `persistent_unit` holds the stripe unit of persistent
// realms: set by the first operation that uses them and reused after.
RealmLayout plan_realms(const RealmSettings& settings, std::span<const AccessSummary> summaries,
                        std::optional<std::int64_t>& persistent_unit);

}  // namespace flowio::core
