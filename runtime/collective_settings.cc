#include "runtime/collective_settings.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <string>

#include "flowio/error.h"

namespace flowio::runtime {
namespace {

std::int64_t parse_count(const std::string& key, const std::string& text, std::int64_t least) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least) {
    throw UsageError(ErrorCode::invalid_argument,
                     "hint " + key + ": expected an integer >= " + std::to_string(least) +
                         ", got \"" + text + "\"");
  }
  return value;
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
    const int rank = static_cast<int>(parse_count("flowio_aggregators", item, 0));
    if (rank >= ranks) {
      throw UsageError(ErrorCode::invalid_argument,
                       "hint flowio_aggregators: rank " + item + " is not in the communicator");
    }
    if (std::find(list.begin(), list.end(), rank) == list.end()) list.push_back(rank);
  }
  if (list.empty()) {
    throw UsageError(ErrorCode::invalid_argument, "hint flowio_aggregators: no rank given");
  }
  return list;
}

// `count` aggregators spread over the ranks, the way nodes would be.
std::vector<int> spread_ranks(int count, int ranks) {
  std::vector<int> list;
  for (int i = 0; i < count; ++i) list.push_back(static_cast<int>(std::int64_t{i} * ranks / count));
  return list;
}

}  // namespace

CollectiveSettings CollectiveSettings::from_hints(const Hints& hints, int ranks, bool writing) {
  CollectiveSettings settings;
  if (const std::string* mode = find(hints, writing ? "romio_cb_write" : "romio_cb_read")) {
    if (*mode != "enable" && *mode != "disable" && *mode != "automatic") {
      throw UsageError(ErrorCode::invalid_argument,
                       std::string(writing ? "hint romio_cb_write" : "hint romio_cb_read") +
                           ": expected enable, disable or automatic, got \"" + *mode + "\"");
    }
    settings.buffering = *mode == "enable"    ? Buffering::enable
                         : *mode == "disable" ? Buffering::disable
                                              : Buffering::automatic;
  }
  if (const std::string* text = find(hints, "cb_buffer_size")) {
    // Messages carry int counts: keep a window well below 2 GiB.
    settings.realms.window_bytes =
        std::min<std::int64_t>(parse_count("cb_buffer_size", *text, 1), std::int64_t{1} << 30);
  }
  if (const std::string* text = find(hints, "flowio_buffers_in_flight")) {
    settings.buffers_in_flight =
        static_cast<int>(parse_count("flowio_buffers_in_flight", *text, 1));
  }
  settings.aggregator_ranks = spread_ranks(ranks, ranks);
  if (const std::string* text = find(hints, "flowio_aggregators")) {
    settings.aggregator_ranks = parse_rank_list(*text, ranks);
  }
  if (const std::string* text = find(hints, "cb_nodes")) {
    const int wanted =
        static_cast<int>(std::min<std::int64_t>(parse_count("cb_nodes", *text, 1), ranks));
    if (find(hints, "flowio_aggregators") != nullptr) {
      settings.aggregator_ranks.resize(std::min<std::size_t>(settings.aggregator_ranks.size(),
                                                             static_cast<std::size_t>(wanted)));
    } else {
      settings.aggregator_ranks = spread_ranks(wanted, ranks);
    }
  }
  settings.realms.slots = static_cast<int>(settings.aggregator_ranks.size());
  for (const char* key : {"romio_cb_fr_alignment", "striping_unit"}) {
    if (const std::string* text = find(hints, key)) {
      settings.realms.alignment = parse_count(key, *text, 1);
      break;
    }
  }
  if (const std::string* text = find(hints, "flowio_realm_policy")) {
    settings.realms.policy = core::parse_realm_policy(*text);
  } else if (const std::string* pfr = find(hints, "romio_cb_pfr"); pfr && *pfr == "enable") {
    settings.realms.policy = core::RealmPolicy::persistent;
  } else if (settings.realms.alignment > 0) {
    settings.realms.policy = core::RealmPolicy::aligned;
  }
  if (const std::string* text = find(hints, writing ? "romio_ds_write" : "romio_ds_read")) {
    settings.window_io.sieve = io::parse_sieve_mode(*text);
  }
  // Measured with bench/sieve on the development machine (bench/README.md):
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
    settings.window_io.mapping = io::parse_sieve_mode(*text);
  }
  if (const std::string* text = find(hints, "flowio_direct_threshold")) {
    settings.direct_threshold = parse_count("flowio_direct_threshold", *text, 0);
  }
  if (const std::string* text = find(hints, "flowio_exchange")) {
    if (*text != "point_to_point" && *text != "alltoallw") {
      throw UsageError(
          ErrorCode::invalid_argument,
          "hint flowio_exchange: expected point_to_point or alltoallw, got \"" + *text + "\"");
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
  return settings;
}

}  // namespace flowio::runtime
