#include "runtime/plan/collective_settings.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "flowio/error.h"

namespace flowio::runtime {
namespace {

[[noreturn]] void bad_hint(const std::string& key, const std::string& why) {
  throw UsageError(ErrorCode::invalid_hint, "hint " + key + ": " + why);
}

// The largest value accepted for a size or distance in bytes (1 TiB): far
// beyond any use, and small enough that sums and products of it with
// counts of pieces stay within 64 bits.
constexpr std::int64_t kMostBytes = std::int64_t{1} << 40;

// An integer in [least, most]; anything else (not a number, out of range,
// trailing characters) is an invalid_hint naming the key.
std::int64_t parse_count(const std::string& key, const std::string& text, std::int64_t least,
                         std::int64_t most = kMostBytes) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least || value > most) {
    bad_hint(key, "expected an integer from " + std::to_string(least) + " to " +
                      std::to_string(most) + ", got \"" + text + "\"");
  }
  return value;
}

// A keyword hint parsed by `parse` (which throws UsageError for a word it
// does not know), reported as an invalid_hint naming the key.
template <typename Parse>
auto parse_keyword(const std::string& key, const std::string& text, Parse&& parse) {
  try {
    return parse(text);
  } catch (const UsageError& error) {
    bad_hint(key, error.what());
  }
}

const std::string* find(const Hints& hints, const char* key) {
  const auto it = hints.find(key);
  return it == hints.end() ? nullptr : &it->second;
}

std::vector<int> parse_rank_list(const std::string& text, int ranks) {
  std::vector<int> list;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const int rank = static_cast<int>(parse_count("flowio_aggregators", item, 0, ranks - 1));
    if (std::find(list.begin(), list.end(), rank) == list.end()) list.push_back(rank);
  }
  if (list.empty()) bad_hint("flowio_aggregators", "no rank given");
  return list;
}

// `count` aggregators spread over the ranks, the way nodes would be.
std::vector<int> spread_ranks(int count, int ranks) {
  std::vector<int> list;
  for (int i = 0; i < count; ++i) list.push_back(static_cast<int>(std::int64_t{i} * ranks / count));
  return list;
}

// The realm policy and its parameters, for realms.slots aggregators.
// Realms the program described win over every realm hint. Otherwise
// flowio_realm_policy names the policy; without it, flowio_realm_stripe
// means datatype realms (round-robin stripes), romio_cb_pfr=enable
// persistent ones (or stripes of romio_cb_fr_type bytes, as ROMIO reads
// that hint under romio_cb_pfr), and an alignment aligned ones.
void read_realm_hints(const Hints& hints, const core::RealmDescription* file_realms,
                      core::RealmSettings& realms) {
  for (const char* key : {"romio_cb_fr_alignment", "striping_unit"}) {
    if (const std::string* text = find(hints, key)) {
      realms.alignment = parse_count(key, *text, 1);
      break;
    }
  }
  std::int64_t stripe = 0;
  if (const std::string* text = find(hints, "flowio_realm_stripe")) {
    stripe = parse_count("flowio_realm_stripe", *text, 1);
  }
  const std::string* pfr = find(hints, "romio_cb_pfr");
  const bool persistent = pfr != nullptr && *pfr == "enable";
  // ROMIO's romio_cb_fr_type: 0 (realms of the aggregate access region),
  // -1 (of the file size), -2 (realms the program gives), or a realm size
  // in bytes: stripes of that size dealt round robin from byte 0, rounded
  // up to the alignment. ROMIO reports its default as "aar" (the name of
  // 0), which a program may pass back.
  std::int64_t romio_stripe = 0;
  if (const std::string* text = find(hints, "romio_cb_fr_type"); text && *text != "aar") {
    romio_stripe = std::max<std::int64_t>(parse_count("romio_cb_fr_type", *text, -2), 0);
    if (realms.alignment > 0) {
      romio_stripe = (romio_stripe + realms.alignment - 1) / realms.alignment * realms.alignment;
    }
  }
  if (file_realms != nullptr) {
    realms.policy = core::RealmPolicy::datatype;
    realms.tiling = std::make_shared<const core::RealmTiling>(file_realms->tiling(realms.slots));
    return;
  }
  if (const std::string* text = find(hints, "flowio_realm_policy")) {
    realms.policy = parse_keyword("flowio_realm_policy", *text, core::parse_realm_policy);
    if (stripe > 0 && realms.policy != core::RealmPolicy::datatype) {
      bad_hint("flowio_realm_stripe",
               "gives datatype realms, but flowio_realm_policy asks for " + *text);
    }
  } else if (stripe > 0) {
    realms.policy = core::RealmPolicy::datatype;
  } else if (persistent && romio_stripe > 0) {
    realms.policy = core::RealmPolicy::datatype;
  } else if (persistent) {
    realms.policy = core::RealmPolicy::persistent;
  } else if (realms.alignment > 0) {
    realms.policy = core::RealmPolicy::aligned;
  }
  if (realms.policy == core::RealmPolicy::datatype) {
    if (stripe == 0 && persistent) stripe = romio_stripe;  // flowio's hint first
    if (stripe == 0) {
      bad_hint("flowio_realm_policy",
               "datatype realms need flowio_realm_stripe or File::set_file_realms");
    }
    realms.tiling = std::make_shared<const core::RealmTiling>(parse_keyword(
        "flowio_realm_stripe", std::to_string(stripe),
        [&](const std::string&) { return core::RealmTiling::stripes(realms.slots, stripe); }));
  }
}

}  // namespace

CollectiveSettings CollectiveSettings::from_hints(const Hints& hints, int ranks, bool writing,
                                                  const core::RealmDescription* file_realms) {
  CollectiveSettings settings;
  if (const std::string* mode = find(hints, writing ? "romio_cb_write" : "romio_cb_read")) {
    if (*mode != "enable" && *mode != "disable" && *mode != "automatic") {
      bad_hint(writing ? "romio_cb_write" : "romio_cb_read",
               "expected enable, disable or automatic, got \"" + *mode + "\"");
    }
    settings.buffering = *mode == "enable"    ? Buffering::enable
                         : *mode == "disable" ? Buffering::disable
                                              : Buffering::automatic;
  }
  if (const std::string* text = find(hints, "cb_buffer_size")) {
    // At most 1 GiB: a window is a buffer of memory per buffer in flight,
    // and ROMIO reads this hint as an int (nothing in the exchange needs
    // it: messages go through the large-count calls).
    settings.realms.window_bytes =
        std::min<std::int64_t>(parse_count("cb_buffer_size", *text, 1), std::int64_t{1} << 30);
  }
  if (const std::string* text = find(hints, "flowio_buffers_in_flight")) {
    // Each buffer in flight is a window of memory: more than this many is
    // no pipeline but a request for unbounded memory.
    settings.buffers_in_flight =
        static_cast<int>(parse_count("flowio_buffers_in_flight", *text, 1, 1024));
  }
  settings.aggregator_ranks = spread_ranks(ranks, ranks);
  if (const std::string* text = find(hints, "flowio_aggregators")) {
    settings.aggregator_ranks = parse_rank_list(*text, ranks);
  }
  if (const std::string* text = find(hints, "cb_nodes")) {
    const int wanted = static_cast<int>(
        std::min<std::int64_t>(parse_count("cb_nodes", *text, 1, INT32_MAX), ranks));
    if (find(hints, "flowio_aggregators") != nullptr) {
      settings.aggregator_ranks.resize(std::min<std::size_t>(settings.aggregator_ranks.size(),
                                                             static_cast<std::size_t>(wanted)));
    } else {
      settings.aggregator_ranks = spread_ranks(wanted, ranks);
    }
  }
  settings.realms.slots = static_cast<int>(settings.aggregator_ranks.size());
  read_realm_hints(hints, file_realms, settings.realms);
  if (const std::string* text = find(hints, writing ? "romio_ds_write" : "romio_ds_read")) {
    settings.window_io.sieve =
        parse_keyword(writing ? "romio_ds_write" : "romio_ds_read", *text, io::parse_sieve_mode);
  }
  // Measured with bench/sieve on the development machine (6ba8c59:bench/README.md):
  // sieving a 16 MiB window of 8-byte pieces beats one request per piece
  // below these mean distances between pieces.
  settings.window_io.sieve_threshold = writing ? 16384 : 4096;
  // Through a mapping of a cached file, sieving beats one request per
  // piece up to these distances (bench/sieve, mapped_s).
  settings.window_io.mapped_threshold = writing ? 262144 : 65536;
  if (const std::string* text = find(hints, "flowio_ds_threshold")) {
    settings.window_io.sieve_threshold = parse_count("flowio_ds_threshold", *text, 0);
  }
  if (const std::string* text = find(hints, "flowio_ds_mapping")) {
    settings.window_io.mapping = parse_keyword("flowio_ds_mapping", *text, io::parse_sieve_mode);
  }
  const char* batch_key = writing ? "ind_wr_buffer_size" : "ind_rd_buffer_size";
  if (const std::string* text = find(hints, batch_key)) {
    settings.window_io.independent_batch_bytes =
        parse_count(batch_key, *text, 1, std::int64_t{1} << 30);
  }
  if (const std::string* text = find(hints, "romio_no_indep_rw")) {
    // A promise with no effect here: other values are ignored, not
    // refused, as ROMIO ignores them (MPICH's i_aggregation1 passes "1").
    settings.no_independent_accesses = *text == "true" || *text == "TRUE";
  }
  if (const std::string* text = find(hints, "flowio_direct_threshold")) {
    // Compared with bytes per piece times pieces: at most 1 GiB keeps the
    // product within 64 bits for any access that fits in memory.
    settings.direct_threshold =
        parse_count("flowio_direct_threshold", *text, 0, std::int64_t{1} << 30);
  }
  if (const std::string* text = find(hints, "flowio_exchange")) {
    if (*text != "point_to_point" && *text != "alltoallw") {
      bad_hint("flowio_exchange", "expected point_to_point or alltoallw, got \"" + *text + "\"");
    }
    settings.alltoallw = *text == "alltoallw";
  }
  if (const std::string* text = find(hints, "flowio_durable")) {
    if (*text != "enable" && *text != "disable") {
      throw UsageError(ErrorCode::invalid_argument,
                       "hint flowio_durable: expected enable or disable, got \"" + *text + "\"");
    }
    settings.durable = *text == "enable";
  }
  if (const std::string* text = find(hints, "flowio_plan_cache")) {
    settings.plans_kept = static_cast<int>(parse_count("flowio_plan_cache", *text, 0));
  }
  settings.compression = exchange::CompressionSettings::from_hints(hints);
  return settings;
}

}  // namespace flowio::runtime
