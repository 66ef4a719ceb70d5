// The adaptive compression rule as pure logic: hints, forced modes, what
// it learns from transfers, samples and codec timings, and, in a simulated
// world of links and data, that auto compresses where it pays and stays
// within 5% of off where it does not.
#include "exchange/compression_rule.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace flowio::exchange;

constexpr double kGigabit = 125e6;  // bytes per second
constexpr std::int64_t kMessage = 1 << 20;

CompressionSettings automatic() { return CompressionSettings{}; }

// Reports a raw message of `bytes` to `peer`, in flight from `start` to `end`.
void raw_send(CompressionRule& rule, int peer, std::int64_t bytes, double start, double end) {
  rule.record_send(peer, {bytes, bytes, false, start, end});
}

// Reports a compressed message of `bytes` (original) to `peer`, framed
// from `start`, delivered at `end`.
void compressed_send(CompressionRule& rule, int peer, std::int64_t bytes, double start,
                     double end) {
  rule.record_send(peer, {bytes, bytes / 3, true, start, end});
}

// Reports `count` back-to-back transfers of `bytes` to `peer` at `rate`
// bytes per second, starting at `clock` (advanced past them).
void feed_link(CompressionRule& rule, int peer, double rate, double& clock, int count = 4,
               std::int64_t bytes = kMessage) {
  for (int i = 0; i < count; ++i) {
    const double seconds = static_cast<double>(bytes) / rate;
    raw_send(rule, peer, bytes, clock, clock + seconds);
    clock += seconds;
  }
}

// A sampler that reports `ratio`, compression at `speed` bytes per second
// and decompression at `decode_speed` (three times faster unless given),
// and counts its calls.
struct FakeSampler {
  double ratio;
  double speed;
  double decode_speed = 0;
  int calls = 0;
  CompressionSample operator()() {
    ++calls;
    const std::int64_t in = 16384;
    const double decode = decode_speed > 0 ? decode_speed : 3 * speed;
    if (ratio >= 1) return {in, in, static_cast<double>(in) / speed, 0, 0};
    return {in, static_cast<std::int64_t>(ratio * in), static_cast<double>(in) / speed, in,
            static_cast<double>(in) / decode};
  }
};

// Decides in a stage that follows the model (begin_stage's usual plan).
CompressionDecision decide(CompressionRule& rule, int peer, FakeSampler& sampler,
                           std::int64_t bytes = kMessage, std::int64_t depth = 12,
                           CompressionRule::Stage stage = {}) {
  return rule.decide(peer, bytes, depth, stage, [&] { return sampler(); });
}

}  // namespace

// The hints parse into settings; malformed values are a UsageError.
TEST_CASE("Exchange.CompressionRule.Hints") {
  const CompressionSettings defaults = CompressionSettings::from_hints({});
  CHECK(defaults.mode == CompressionMode::automatic);
  CHECK(defaults.min_bytes == 65536);
  CHECK(CompressionSettings::from_hints({{"flowio_compress", "on"}}).mode == CompressionMode::on);
  CHECK(CompressionSettings::from_hints({{"flowio_compress", "off"}}).mode == CompressionMode::off);
  CHECK(CompressionSettings::from_hints({{"flowio_compress", "auto"}}).mode ==
        CompressionMode::automatic);
  CHECK(CompressionSettings::from_hints({{"flowio_compress_min_bytes", "0"}}).min_bytes == 0);
  CHECK_THROWS_AS(CompressionSettings::from_hints({{"flowio_compress", "yes"}}),
                  flowio::UsageError);
  CHECK_THROWS_AS(CompressionSettings::from_hints({{"flowio_compress_min_bytes", "-1"}}),
                  flowio::UsageError);
  CHECK_THROWS_AS(CompressionSettings::from_hints({{"flowio_compress_min_bytes", "4k"}}),
                  flowio::UsageError);
}

// off never compresses and on always does (above the minimum), neither sampling.
TEST_CASE("Exchange.CompressionRule.ForcedModes") {
  FakeSampler sampler{1.0, 7e9};
  CompressionSettings off;
  off.mode = CompressionMode::off;
  CompressionRule never(off, 2);
  CHECK(decide(never, 1, sampler).reason == CompressionReason::forced_off);
  CompressionSettings on;
  on.mode = CompressionMode::on;
  CompressionRule always(on, 2);
  const CompressionDecision forced = decide(always, 1, sampler);
  CHECK(forced.compress);
  CHECK(forced.reason == CompressionReason::forced_on);
  CHECK(decide(always, 1, sampler, on.min_bytes - 1).reason == CompressionReason::too_small);
  CHECK(sampler.calls == 0);
}

// Until a link is measured its messages go raw (and measure it); then the sample decides.
TEST_CASE("Exchange.CompressionRule.MeasuresBeforeDeciding") {
  CompressionRule rule(automatic(), 2);
  FakeSampler sampler{0.4, 650e6};
  CHECK(decide(rule, 1, sampler).reason == CompressionReason::unmeasured_link);
  CHECK(sampler.calls == 0);
  double clock = 0;
  feed_link(rule, 1, kGigabit, clock);
  const CompressionDecision decision = decide(rule, 1, sampler);
  CHECK(decision.compress);
  CHECK(decision.reason == CompressionReason::saves_time);
  CHECK(sampler.calls == 1);
  REQUIRE(decision.sample);
  CHECK(decision.sample->bytes_out < decision.sample->bytes_in);
}

// Over a slow link, data that do not compress go raw.
TEST_CASE("Exchange.CompressionRule.IncompressibleStaysRaw") {
  CompressionRule rule(automatic(), 2);
  double clock = 0;
  feed_link(rule, 0, kGigabit, clock);
  FakeSampler sampler{0.98, 5e9};
  CHECK(decide(rule, 0, sampler).reason == CompressionReason::no_saving);
}

// A link faster than the codec is recognised without sampling.
TEST_CASE("Exchange.CompressionRule.FastLinkSkipsSampling") {
  CompressionRule rule(automatic(), 2);
  rule.record_compression(kMessage, kMessage / 650e6);
  double clock = 0;
  feed_link(rule, 1, 9e9, clock);
  FakeSampler sampler{0.01, 650e6};
  CHECK(decide(rule, 1, sampler).reason == CompressionReason::fast_link);
  CHECK(sampler.calls == 0);
}

// Decisions are per peer: a slow peer gets compressed data, a fast one raw.
TEST_CASE("Exchange.CompressionRule.PerPeer") {
  CompressionRule rule(automatic(), 3);
  double clock = 0;
  feed_link(rule, 1, kGigabit, clock);
  feed_link(rule, 2, 5e9, clock);
  rule.record_compression(kMessage, kMessage / 650e6);
  FakeSampler sampler{0.4, 650e6};
  CHECK(decide(rule, 1, sampler).compress);
  CHECK_FALSE(decide(rule, 2, sampler).compress);
  CHECK(decide(rule, 0, sampler).reason == CompressionReason::unmeasured_link);
}

// A slow codec pays only when the pipeline hides it behind other messages.
TEST_CASE("Exchange.CompressionRule.OverlapMatters") {
  CompressionRule rule(automatic(), 2);
  double clock = 0;
  feed_link(rule, 1, 118e6, clock);
  rule.record_decompression(kMessage, kMessage / 600e6);
  FakeSampler sampler{0.3, 200e6};
  // Alone: 1/200 + 0.3/118 + 1/600 ms per MB exceeds 1/118.
  CHECK(decide(rule, 1, sampler, kMessage, 1).reason == CompressionReason::no_saving);
  // In a stream of 12: the codec runs while other messages are sent.
  CHECK(decide(rule, 1, sampler, kMessage, 12).compress);
}

// Data that encode fast but decode slowly (long zero runs) are judged by the slower side.
TEST_CASE("Exchange.CompressionRule.SlowDecompressionCounts") {
  CompressionRule rule(automatic(), 3);
  double clock = 0;
  feed_link(rule, 1, 500e6, clock);  // shared memory, seen through a loaded node
  feed_link(rule, 2, 10e6, clock);   // one flow's share of a 1 Gbit/s link
  FakeSampler zeros{0.005, 20e9, 300e6};
  CHECK(decide(rule, 1, zeros).reason == CompressionReason::no_saving);
  CHECK(decide(rule, 2, zeros).compress);
  // What the samples taught is enough to skip sampling the fast link.
  CHECK(decide(rule, 1, zeros).reason == CompressionReason::fast_link);
}

// Overlapping raw transfers to one peer count their shared time once; short ones and compressed
// ones do not measure the link.
TEST_CASE("Exchange.CompressionRule.TransferAccounting") {
  CompressionRule rule(automatic(), 2);
  raw_send(rule, 1, 1000000, 0.0, 0.01);
  raw_send(rule, 1, 1000000, 0.0, 0.01);
  raw_send(rule, 1, 1000, 0.02, 0.03);            // latency, not bandwidth
  raw_send(rule, 1, 1000000, 0.05, 0.05);         // no duration
  raw_send(rule, 7, 1000000, 0.0, 0.01);          // no such peer
  compressed_send(rule, 1, 1000000, 0.0, 0.001);  // not a measure of the link
  const auto estimates = rule.estimates();
  REQUIRE(estimates.link_bytes_per_second.size() == 2);
  CHECK_FALSE(estimates.link_bytes_per_second[0]);
  REQUIRE(estimates.link_bytes_per_second[1]);
  // 2 MB in 10 ms, the second transfer's bytes counted with decay:
  // (1e6 * 0.75 + 1e6) / (0.01 * 0.75 + 0) = 233 MB/s.
  CHECK(*estimates.link_bytes_per_second[1] == doctest::Approx(1.75e6 / 0.0075));
  CHECK_THROWS_AS(rule.decide(5, kMessage, 1, {}, [] { return CompressionSample{}; }),
                  flowio::UsageError);
}

// When a link turns fast, the rule stops compressing within a few messages.
TEST_CASE("Exchange.CompressionRule.FollowsLinkChange") {
  CompressionRule rule(automatic(), 2);
  double clock = 0;
  feed_link(rule, 1, kGigabit, clock);
  FakeSampler sampler{0.3, 650e6};
  CHECK(decide(rule, 1, sampler).compress);
  feed_link(rule, 1, 8e9, clock, 8);
  CHECK(decide(rule, 1, sampler).reason == CompressionReason::fast_link);
}

namespace {

// A simulated exchange of `stages` stages of 12 messages to one peer over
// a link of `link` bytes/s, with data compressing to `ratio` at `speed`
// (decompression three times faster). Returns the time with the rule's
// decisions relative to sending everything raw. Each stage is pipelined
// (its time is its slowest stage's total), unless `serial`: then the
// codec and the transfers take turns on the same cores and compressing
// does not shorten the transfers (shared memory on an oversubscribed
// node, as the rule's link measurements cannot tell). The rule observes
// every raw send and every stage; sampling is charged in full.
double relative_time(CompressionMode mode, double link, double ratio, double speed,
                     bool serial = false, int stages = 10) {
  CompressionSettings settings;
  settings.mode = mode;
  CompressionRule rule(settings, 2);
  const double n = static_cast<double>(kMessage);
  constexpr int kPerStage = 12;
  double off_time = 0;
  double time = 0;
  double clock = 0;
  for (int s = 0; s < stages; ++s) {
    const CompressionRule::Stage stage = rule.begin_stage();
    double codec = 0;
    double wire = 0;
    double decode = 0;
    std::int64_t compressed = 0;
    for (int m = 0; m < kPerStage; ++m) {
      off_time += n / link;
      FakeSampler sampler{ratio, speed};
      const CompressionDecision decision =
          decide(rule, 1, sampler, kMessage, kPerStage * stages, stage);
      if (decision.sample) codec += decision.sample->seconds;
      const double bytes = decision.compress && !serial ? n * ratio : n;
      if (decision.compress) {
        compressed += kMessage;
        codec += n / speed;
        decode += n / (3 * speed);
        rule.record_compression(kMessage, n / speed);
        rule.record_decompression(kMessage, n / (3 * speed));
      } else {
        rule.record_send(1, {kMessage, kMessage, false, clock, clock + n / link});
      }
      wire += bytes / link;
      clock += bytes / link;
    }
    const double stage_time = serial ? codec + wire + decode : std::max({codec, wire, decode});
    rule.record_stage(stage_time, 2 * kPerStage * kMessage, kPerStage * kMessage, compressed);
    time += stage_time;
  }
  return time / off_time;
}

}  // namespace

// While compressing to a peer, every kProbeInterval-th message goes raw to measure the link again.
TEST_CASE("Exchange.CompressionRule.ProbesRawWhileCompressing") {
  CompressionRule rule(automatic(), 2);
  double clock = 0;
  feed_link(rule, 1, kGigabit, clock);
  FakeSampler sampler{0.3, 650e6};
  int compressed = 0;
  CompressionDecision decision;
  while ((decision = decide(rule, 1, sampler)).compress) ++compressed;
  CHECK(compressed == CompressionRule::kProbeInterval - 1);
  CHECK(decision.reason == CompressionReason::probe_raw);
  CHECK(decide(rule, 1, sampler).compress);  // the probe changed nothing
}

// The first stage goes raw (it measures), whatever the model would say.
TEST_CASE("Exchange.CompressionRule.FirstStageRaw") {
  CompressionRule rule(automatic(), 2);
  double clock = 0;
  feed_link(rule, 1, kGigabit, clock);
  const CompressionRule::Stage first = rule.begin_stage();
  CHECK(first.plan == CompressionRule::StagePlan::raw);
  FakeSampler sampler{0.3, 650e6};
  CHECK(decide(rule, 1, sampler, kMessage, 12, first).reason == CompressionReason::unmeasured_link);
  CHECK(sampler.calls == 0);
  rule.record_stage(0.1, 10 * kMessage, 5 * kMessage, 0);
  CHECK(rule.begin_stage().plan == CompressionRule::StagePlan::model);
}

// Stages that went compressed but were slower than raw ones stop compression, with probes.
TEST_CASE("Exchange.CompressionRule.StagesWithoutGain") {
  CompressionRule rule(automatic(), 2);
  double clock = 0;
  feed_link(rule, 1, 100e6, clock);
  FakeSampler sampler{0.3, 650e6};
  rule.record_stage(0.1, 10 * kMessage, 5 * kMessage, 0);             // raw: 100 MiB/s
  rule.record_stage(0.2, 10 * kMessage, 5 * kMessage, 5 * kMessage);  // compressed: 50
  CompressionRule::Stage stage = rule.begin_stage();
  CHECK(stage.plan == CompressionRule::StagePlan::vetoed);
  CHECK(decide(rule, 1, sampler, kMessage, 12, stage).reason ==
        CompressionReason::no_gain_observed);
  CHECK(sampler.calls == 0);  // decided without sampling
  // Raw stages follow; after kStageProbeInterval stages one tries the model.
  int vetoed = 0;
  while ((stage = rule.begin_stage()).plan == CompressionRule::StagePlan::vetoed) {
    ++vetoed;
    rule.record_stage(0.1, 10 * kMessage, 5 * kMessage, 0);
  }
  CHECK(vetoed == CompressionRule::kStageProbeInterval - 1);
  CHECK(stage.probe);
  CHECK(decide(rule, 1, sampler, kMessage, 12, stage).reason ==
        CompressionReason::probe_compressed);
}

// Stages that went compressed and were faster keep compressing, with a raw stage now and then.
TEST_CASE("Exchange.CompressionRule.StagesWithGain") {
  CompressionRule rule(automatic(), 2);
  rule.record_stage(0.2, 10 * kMessage, 5 * kMessage, 0);             // raw
  rule.record_stage(0.1, 10 * kMessage, 5 * kMessage, 4 * kMessage);  // compressed, faster
  int model = 0;
  CompressionRule::Stage stage;
  while ((stage = rule.begin_stage()).plan == CompressionRule::StagePlan::model) {
    ++model;
    rule.record_stage(0.1, 10 * kMessage, 5 * kMessage, 4 * kMessage);
  }
  CHECK(stage.plan == CompressionRule::StagePlan::raw);
  CHECK(stage.probe);
  CHECK(model == CompressionRule::kStageProbeInterval - 2);
}

// In a simulated world, auto approaches on where compression pays and off where it does not.
TEST_CASE("Exchange.CompressionRule.SimulatedStreams") {
  // 75% zeros over 1 Gbit/s (ratio about 0.3): auto saves at least 40%
  // (the first stage measures, raw).
  CHECK(relative_time(CompressionMode::automatic, 118e6, 0.3, 650e6) < 0.6);
  // 50% zeros (ratio 0.6): at least 20%.
  CHECK(relative_time(CompressionMode::automatic, 118e6, 0.6, 650e6) < 0.8);
  // Random floats over 1 Gbit/s: within 5% of off (on would be no better).
  CHECK(relative_time(CompressionMode::automatic, 118e6, 0.99, 5e9) <= 1.05);
  // Shared memory, even all zeros: within 5% of off, where on is slower.
  CHECK(relative_time(CompressionMode::automatic, 9e9, 0.005, 2e9) <= 1.05);
  CHECK(relative_time(CompressionMode::on, 9e9, 0.005, 2e9) > 1.05);
  // A codec slower than the link: auto keeps off.
  CHECK(relative_time(CompressionMode::automatic, 118e6, 0.6, 100e6) <= 1.05);
  // Shared memory on a busy node that looks like a slow link: the stages
  // show that compressing does not pay, and auto stays within 5% of off
  // (one compressed stage to learn it, then one probe in every
  // kStageProbeInterval stages) where on is far slower.
  CHECK(relative_time(CompressionMode::on, 200e6, 0.3, 650e6, true) > 1.3);
  CHECK(relative_time(CompressionMode::automatic, 200e6, 0.3, 650e6, true, 40) <= 1.05);
}
