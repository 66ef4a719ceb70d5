// Fuzz target: hint parsing (runtime/plan/collective_settings.h). The fuzzer's
// bytes make a set of hints (flowio's own keys and ROMIO's, with any
// values: numbers of every size and sign, words, garbage), a communicator
// size and a direction. from_hints must either refuse them with
// UsageError(invalid_hint) or return settings that keep their promises;
// the realm layout planned from them for a few accesses must cover the
// accessed region.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/realm_policy.h"
#include "runtime/plan/collective_settings.h"
#include "tests/fuzz/fuzz_input.h"

namespace flowio::fuzz {
namespace {

const char* const kKeys[] = {
    "cb_buffer_size",
    "cb_nodes",
    "flowio_aggregators",
    "flowio_buffers_in_flight",
    "flowio_direct_threshold",
    "flowio_ds_mapping",
    "flowio_ds_threshold",
    "flowio_exchange",
    "flowio_realm_policy",
    "romio_cb_fr_alignment",
    "romio_cb_pfr",
    "romio_cb_read",
    "romio_cb_write",
    "romio_ds_read",
    "romio_ds_write",
    "striping_unit",
    "flowio_realm_stripe",
    "romio_cb_fr_type",
};

// Values near the boundaries the parser must tell apart.
std::string value(FuzzInput& in) {
  static const char* const kWords[] = {"enable",
                                       "disable",
                                       "automatic",
                                       "even",
                                       "aligned",
                                       "persistent",
                                       "load_balanced",
                                       "datatype",
                                       "alltoallw",
                                       "point_to_point",
                                       "0",
                                       "-1",
                                       "1",
                                       "1,0",
                                       "0,,1",
                                       "99999999999999999999",
                                       "1099511627776",
                                       "1099511627777",
                                       "1073741824",
                                       "1024",
                                       "1025",
                                       " 4",
                                       "4 ",
                                       "+4",
                                       "0x10"};
  switch (in.in_range(0, 3)) {
    case 0:
      return kWords[in.in_range(0, sizeof kWords / sizeof kWords[0] - 1)];
    case 1:
      return std::to_string(in.word());
    case 2: {
      std::string list;
      const int items = static_cast<int>(in.in_range(1, 4));
      for (int i = 0; i < items; ++i) list += (i ? "," : "") + std::to_string(in.in_range(-2, 70));
      return list;
    }
    default:
      return in.text(24);
  }
}

void check(const runtime::CollectiveSettings& s, int ranks) {
  if (s.realms.window_bytes < 1 || s.realms.window_bytes > (std::int64_t{1} << 30)) {
    finding("window_bytes out of range");
  }
  if (s.buffers_in_flight < 1 || s.buffers_in_flight > 1024) finding("buffers_in_flight range");
  if (s.aggregator_ranks.empty()) finding("no aggregator");
  if (s.realms.slots != static_cast<int>(s.aggregator_ranks.size()))
    finding("slots != aggregators");
  std::set<int> seen;
  for (const int rank : s.aggregator_ranks) {
    if (rank < 0 || rank >= ranks) finding("an aggregator outside the communicator");
    if (!seen.insert(rank).second) finding("an aggregator twice");
  }
  if (s.realms.alignment < 0 || s.realms.alignment > (std::int64_t{1} << 40)) {
    finding("alignment out of range");
  }
  if (s.direct_threshold < 0 || s.direct_threshold > (std::int64_t{1} << 30)) {
    finding("direct_threshold out of range");
  }
  if (s.window_io.sieve_threshold < 0) finding("negative sieve threshold");
  if ((s.realms.policy == core::RealmPolicy::datatype) != (s.realms.tiling != nullptr)) {
    finding("datatype realms without a tiling, or a tiling without them");
  }
  if (s.realms.tiling && s.realms.tiling->slots() != s.realms.slots) finding("tiling slots");
}

// Plans realms for `ranks` small accesses and checks every byte of the
// accessed region falls in some window of some slot.
void check_layout(const runtime::CollectiveSettings& s, int ranks, FuzzInput& in) {
  std::vector<core::AccessSummary> summaries(static_cast<std::size_t>(ranks));
  std::int64_t low = INT64_MAX, high = 0;
  for (core::AccessSummary& summary : summaries) {
    if (in.byte() % 4 == 0) continue;  // this rank has no data
    summary.file_begin = in.in_range(0, 1 << 20);
    summary.file_end = summary.file_begin + in.in_range(1, 1 << 16);
    summary.bytes = summary.file_end - summary.file_begin;
    summary.pieces = 1;
    for (int q = 0; q <= core::AccessSummary::kQuantiles; ++q) {
      summary.quantile[q] =
          summary.file_begin + summary.bytes * q / core::AccessSummary::kQuantiles;
    }
    low = std::min(low, summary.file_begin);
    high = std::max(high, summary.file_end);
  }
  if (high == 0) return;
  std::optional<std::int64_t> persistent_unit;
  const core::RealmLayout layout = core::plan_realms(s.realms, summaries, persistent_unit);
  for (int probe = 0; probe < 8; ++probe) {
    const std::int64_t offset = low + in.in_range(0, 1 << 16) % (high - low);
    const core::Window window = layout.window_at(offset);
    if (offset < window.begin || offset >= window.end) finding("window_at misses its offset");
    if (window.slot < 0 || window.slot >= s.realms.slots) finding("window of no slot");
    if (window.end - window.begin > s.realms.window_bytes) finding("window larger than the buffer");
  }
}

}  // namespace
}  // namespace flowio::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowio::fuzz;
  FuzzInput in(data, size);
  const int ranks = static_cast<int>(in.in_range(1, 64));
  const bool writing = in.byte() % 2 == 0;
  flowio::Hints hints;
  const int count = static_cast<int>(in.in_range(0, 6));
  for (int i = 0; i < count; ++i) {
    const std::string key = in.byte() % 8 == 0
                                ? in.text(12)
                                : kKeys[in.in_range(0, sizeof kKeys / sizeof kKeys[0] - 1)];
    hints[key] = value(in);
  }
  flowio::runtime::CollectiveSettings settings;
  try {
    settings = flowio::runtime::CollectiveSettings::from_hints(hints, ranks, writing);
  } catch (const flowio::UsageError& error) {
    if (error.code() != flowio::ErrorCode::invalid_hint) finding("refused with another code");
    return 0;
  }
  check(settings, ranks);
  check_layout(settings, ranks, in);
  return 0;
}
