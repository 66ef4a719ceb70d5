// The adaptive compression rule as pure logic: hints, forced modes, what
// it learns from transfers, samples and codec timings, and, in a simulated
// world of links and data, that auto compresses where it pays and stays
// within 5% of off where it does not.
#include "exchange/compression_rule.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace {

using flowio::exchange::CompressionDecision;
using flowio::exchange::CompressionMode;
using flowio::exchange::CompressionReason;
using flowio::exchange::CompressionRule;
using flowio::exchange::CompressionSample;
using flowio::exchange::CompressionSettings;

constexpr double kGigabit = 125e6;  // bytes per second
constexpr std::int64_t kMessage = 1 << 20;

CompressionSettings automatic() { return CompressionSettings{}; }

// Reports `count` back-to-back transfers of `bytes` to `peer` at `rate`
// bytes per second, starting at `clock` (advanced past them).
void feed_link(CompressionRule& rule, int peer, double rate, double& clock, int count = 4,
               std::int64_t bytes = kMessage) {
  for (int i = 0; i < count; ++i) {
    const double seconds = static_cast<double>(bytes) / rate;
    rule.record_transfer(peer, bytes, clock, clock + seconds);
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

CompressionDecision decide(CompressionRule& rule, int peer, FakeSampler& sampler,
                           std::int64_t bytes = kMessage, std::int64_t depth = 12) {
  return rule.decide(peer, bytes, depth, [&] { return sampler(); });
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

// Overlapping transfers to one peer count their shared time once; short ones are ignored.
TEST_CASE("Exchange.CompressionRule.TransferAccounting") {
  CompressionRule rule(automatic(), 2);
  rule.record_transfer(1, 1000000, 0.0, 0.01);
  rule.record_transfer(1, 1000000, 0.0, 0.01);
  rule.record_transfer(1, 1000, 0.02, 0.03);     // latency, not bandwidth
  rule.record_transfer(1, 1000000, 0.05, 0.05);  // no duration
  rule.record_transfer(7, 1000000, 0.0, 0.01);   // no such peer
  const auto estimates = rule.estimates();
  REQUIRE(estimates.link_bytes_per_second.size() == 2);
  CHECK_FALSE(estimates.link_bytes_per_second[0]);
  REQUIRE(estimates.link_bytes_per_second[1]);
  // 2 MB in 10 ms, the second transfer's bytes counted with decay:
  // (1e6 * 0.75 + 1e6) / (0.01 * 0.75 + 0) = 233 MB/s.
  CHECK(*estimates.link_bytes_per_second[1] == doctest::Approx(1.75e6 / 0.0075));
  CHECK_THROWS_AS(rule.decide(5, kMessage, 1, [] { return CompressionSample{}; }),
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

// A simulated stream of `messages` messages to one peer over a link of
// `link` bytes/s, with data compressing to `ratio` at `speed` (decompression
// three times faster). Returns the stream's time with the rule's decisions,
// relative to sending everything raw, with the pipeline model the rule
// assumes and sampling cost charged in full. The rule observes each
// message's transfer.
double relative_time(CompressionMode mode, double link, double ratio, double speed,
                     int messages = 60) {
  CompressionSettings settings;
  settings.mode = mode;
  CompressionRule rule(settings, 2);
  const double n = static_cast<double>(kMessage);
  double off_time = 0;
  double compress_busy = 0;
  double wire_busy = 0;
  double decompress_busy = 0;
  double clock = 0;
  for (int i = 0; i < messages; ++i) {
    off_time += n / link;
    FakeSampler sampler{ratio, speed};
    const CompressionDecision decision = decide(rule, 1, sampler, kMessage, messages);
    if (decision.sample) compress_busy += decision.sample->seconds;
    const double wire = decision.compress ? n * ratio : n;
    if (decision.compress) {
      compress_busy += n / speed;
      decompress_busy += n / (3 * speed);
      rule.record_compression(kMessage, n / speed);
      rule.record_decompression(kMessage, n / (3 * speed));
    }
    wire_busy += wire / link;
    rule.record_transfer(1, static_cast<std::int64_t>(wire), clock, clock + wire / link);
    clock += wire / link;
  }
  // Pipelined: the slowest stage's total.
  return std::max({compress_busy, wire_busy, decompress_busy}) / off_time;
}

}  // namespace

// In a simulated world, auto approaches on where compression pays and off where it does not.
TEST_CASE("Exchange.CompressionRule.SimulatedStreams") {
  // 75% zeros over 1 Gbit/s (ratio about 0.3): auto saves at least 40%.
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
}
