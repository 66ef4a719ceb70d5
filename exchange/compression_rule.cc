#include "exchange/compression_rule.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

#include "flowio/error.h"
#include "runtime/core/value_names.h"

namespace flowio::exchange {
namespace {

// Each new observation keeps this share of the weight of the ones before:
// the estimates follow the last several messages, so a link or data that
// changes is noticed within an iteration or two.
constexpr double kDecay = 0.75;

constexpr core::ValueName<CompressionMode> kModeNames[] = {{CompressionMode::automatic, "auto"},
                                                           {CompressionMode::on, "on"},
                                                           {CompressionMode::off, "off"}};

}  // namespace

CompressionSettings CompressionSettings::from_hints(const Hints& hints) {
  CompressionSettings settings;
  if (const auto it = hints.find("flowio_compress"); it != hints.end()) {
    settings.mode = core::value_named(kModeNames, it->second, "hint flowio_compress");
  }
  if (const auto it = hints.find("flowio_compress_min_bytes"); it != hints.end()) {
    const std::string& text = it->second;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0) {
      throw UsageError(
          ErrorCode::invalid_argument,
          "hint flowio_compress_min_bytes: expected an integer >= 0, got \"" + text + "\"");
    }
    settings.min_bytes = value;
  }
  return settings;
}

const char* to_string(CompressionMode mode) { return core::name_of(kModeNames, mode); }

void count_decision(CompressionDecisions& counts, CompressionReason reason) {
  switch (reason) {
    case CompressionReason::forced_on:
    case CompressionReason::saves_time:
      ++counts.compressed;
      break;
    case CompressionReason::probe_compressed:
      ++counts.compressed;
      ++counts.probes;
      break;
    case CompressionReason::forced_off:
      ++counts.forced_off;
      break;
    case CompressionReason::too_small:
      ++counts.too_small;
      break;
    case CompressionReason::unmeasured_link:
      ++counts.unmeasured_link;
      break;
    case CompressionReason::probe_raw:
      ++counts.probes;
      break;
    case CompressionReason::fast_link:
      ++counts.fast_link;
      break;
    case CompressionReason::no_saving:
      ++counts.no_saving;
      break;
    case CompressionReason::no_gain_observed:
      ++counts.no_gain_observed;
      break;
  }
}

void CompressionRule::Rate::add(double more_amount, double more_seconds) {
  amount = amount * kDecay + more_amount;
  seconds = seconds * kDecay + more_seconds;
}

std::optional<double> CompressionRule::Rate::per_second() const {
  if (amount <= 0 || seconds <= 0) return std::nullopt;
  return amount / seconds;
}

CompressionRule::CompressionRule(CompressionSettings settings, int peers,
                                 std::vector<bool> shares_memory)
    : shares_memory_(std::move(shares_memory)),
      settings_(settings),
      links_(static_cast<std::size_t>(std::max(peers, 0))) {}

namespace {

// Seconds per byte from a sample's measurement and a learned rate: the
// sample speaks for this message's data, the history for steadier timing
// (a sample takes microseconds, and one preemption spoils it), so each
// gets half the say. 0 when neither is known.
double blend(std::int64_t sampled_bytes, double sampled_seconds, std::optional<double> learned) {
  const double sampled = sampled_bytes > 0 && sampled_seconds > 0
                             ? sampled_seconds / static_cast<double>(sampled_bytes)
                             : 0;
  if (!learned) return sampled;
  if (sampled == 0) return 1 / *learned;
  return 0.5 * (sampled + 1 / *learned);
}

}  // namespace

CompressionDecision CompressionRule::record(Link& link, CompressionDecision decision) {
  link.since_raw = decision.compress ? link.since_raw + 1 : 0;
  if (decision.reason != CompressionReason::probe_raw) link.compressing = decision.compress;
  return decision;
}

CompressionRule::Stage CompressionRule::begin_stage() {
  std::lock_guard lock(mutex_);
  Stage stage;
  const std::optional<double> raw = raw_stages_.per_second();
  const std::optional<double> compressed = compressed_stages_.per_second();
  if (!raw) {
    stage.plan = StagePlan::raw;
    stage.first = true;
  } else if (compressed && *compressed < *raw * (1 - kStageTolerance)) {
    // Compressing made stages slower: stay raw, but try again now and
    // then (the data or the load may have changed).
    stage.probe = stages_since_compressed_ + 1 >= kStageProbeInterval;
    stage.plan = stage.probe ? StagePlan::model : StagePlan::vetoed;
  } else if (stages_since_raw_ + 1 >= kStageProbeInterval) {
    stage.plan = StagePlan::raw;
    stage.probe = true;
  }
  return stage;
}

CompressionDecision CompressionRule::decide(int peer, std::int64_t bytes, std::int64_t depth,
                                            const Stage& stage, const Sampler& sample) {
  if (settings_.mode == CompressionMode::off) return {false, CompressionReason::forced_off, {}};
  if (bytes < settings_.min_bytes || bytes == 0) return {false, CompressionReason::too_small, {}};
  if (settings_.mode == CompressionMode::on) return {true, CompressionReason::forced_on, {}};
  // A copy through shared memory outruns LZO by far, and on a busy node
  // it only looks slow because it waits for a core, which compressing
  // would take too.
  if (peer >= 0 && static_cast<std::size_t>(peer) < shares_memory_.size() &&
      shares_memory_[static_cast<std::size_t>(peer)]) {
    return {false, CompressionReason::fast_link, {}};
  }

  double link_cost = 0;  // seconds per byte on the wire to `peer`
  {
    std::lock_guard lock(mutex_);
    if (peer < 0 || static_cast<std::size_t>(peer) >= links_.size()) {
      throw UsageError(ErrorCode::invalid_argument,
                       "compression rule: peer " + std::to_string(peer) + " out of range");
    }
    Link& link = links_[static_cast<std::size_t>(peer)];
    if (stage.plan == StagePlan::raw) {
      return record(
          link, {false,
                 stage.first ? CompressionReason::unmeasured_link : CompressionReason::probe_raw,
                 {}});
    }
    const std::optional<double> bandwidth = link.wire.per_second();
    if (!bandwidth) return record(link, {false, CompressionReason::unmeasured_link, {}});
    if (link.compressing && link.since_raw + 1 >= kProbeInterval) {
      return record(link, {false, CompressionReason::probe_raw, {}});
    }
    link_cost = 1 / *bandwidth;
    // Even a message that compressed to nothing would take n/C to
    // compress and n/D to decompress: if either alone is slower than the
    // link, no sample can change the answer.
    const double codec_cost =
        std::max(blend(0, 0, compression_.per_second()), blend(0, 0, decompression_.per_second()));
    if (codec_cost >= link_cost * (1 - settings_.margin)) {
      return record(link, {false, CompressionReason::fast_link, {}});
    }
    if (stage.plan == StagePlan::vetoed) {
      return record(link, {false, CompressionReason::no_gain_observed, {}});
    }
  }

  const CompressionSample sampled = sample();
  std::lock_guard lock(mutex_);
  Link& link = links_[static_cast<std::size_t>(peer)];
  const double ratio = sampled.bytes_in > 0 ? static_cast<double>(sampled.bytes_out) /
                                                  static_cast<double>(sampled.bytes_in)
                                            : 1.0;
  const double compress = blend(sampled.bytes_in, sampled.seconds, compression_.per_second());
  double decompress =
      blend(sampled.bytes_decompressed, sampled.decompress_seconds, decompression_.per_second());
  // Nothing decompressed yet (the sample did not shrink): take it to be
  // as slow as compression, erring towards not compressing.
  if (decompress == 0) decompress = compress;
  if (sampled.bytes_in > 0 && sampled.seconds > 0) {
    compression_.add(static_cast<double>(sampled.bytes_in), sampled.seconds);
  }
  if (sampled.bytes_decompressed > 0 && sampled.decompress_seconds > 0) {
    decompression_.add(static_cast<double>(sampled.bytes_decompressed), sampled.decompress_seconds);
  }
  const double wire = ratio * link_cost;
  const double slowest = std::max({compress, wire, decompress});
  const double unhidden = (compress + wire + decompress - slowest) /
                          static_cast<double>(std::max<std::int64_t>(depth, 1));
  // Per byte of the message: the compressed stream's pace against the
  // raw one's, which is the link alone.
  if (slowest + unhidden >= (1 - settings_.margin) * link_cost) {
    return record(link, {false, CompressionReason::no_saving, sampled});
  }
  return record(
      link,
      {true, stage.probe ? CompressionReason::probe_compressed : CompressionReason::saves_time,
       sampled});
}

void CompressionRule::record_send(int peer, const SentMessage& message) {
  if (message.compressed || message.wire_bytes < kMeasuredBytes ||
      message.completed <= message.posted) {
    return;
  }
  std::lock_guard lock(mutex_);
  if (peer < 0 || static_cast<std::size_t>(peer) >= links_.size()) return;
  Link& link = links_[static_cast<std::size_t>(peer)];
  // Transfers to one peer that overlap share the link: count the time
  // from the later of this one's start and the previous one's end (one
  // that ended inside time already counted adds none, though its bytes
  // still moved in that time).
  const double from = std::max(message.posted, link.busy_until);
  link.busy_until = std::max(link.busy_until, message.completed);
  link.wire.add(static_cast<double>(message.wire_bytes), std::max(message.completed - from, 0.0));
}

void CompressionRule::record_stage(double seconds, std::int64_t bytes, std::int64_t sent_bytes,
                                   std::int64_t compressed_bytes) {
  if (seconds <= 0 || bytes <= 0) return;
  std::lock_guard lock(mutex_);
  const bool compressed = sent_bytes > 0 && 2 * compressed_bytes >= sent_bytes;
  (compressed ? compressed_stages_ : raw_stages_).add(static_cast<double>(bytes), seconds);
  stages_since_compressed_ = compressed ? 0 : stages_since_compressed_ + 1;
  stages_since_raw_ = compressed ? stages_since_raw_ + 1 : 0;
}

void CompressionRule::record_compression(std::int64_t bytes_in, double seconds) {
  if (bytes_in <= 0 || seconds <= 0) return;
  std::lock_guard lock(mutex_);
  compression_.add(static_cast<double>(bytes_in), seconds);
}

void CompressionRule::record_decompression(std::int64_t bytes_out, double seconds) {
  if (bytes_out <= 0 || seconds <= 0) return;
  std::lock_guard lock(mutex_);
  decompression_.add(static_cast<double>(bytes_out), seconds);
}

CompressionEstimates CompressionRule::estimates() const {
  std::lock_guard lock(mutex_);
  CompressionEstimates estimates;
  estimates.compress_bytes_per_second = compression_.per_second();
  estimates.decompress_bytes_per_second = decompression_.per_second();
  for (const Link& link : links_) estimates.link_bytes_per_second.push_back(link.wire.per_second());
  estimates.raw_stage_bytes_per_second = raw_stages_.per_second();
  estimates.compressed_stage_bytes_per_second = compressed_stages_.per_second();
  return estimates;
}

}  // namespace flowio::exchange
