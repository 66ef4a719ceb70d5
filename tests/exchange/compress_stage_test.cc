// The compress and decompress stage bodies: raw messages are framed in
// place and unpacked from the receive buffer, compressed ones go through
// the spare and scratch buffers, every decision and byte is counted, and
// metadata word lists round-trip.
#include "exchange/compress_stage.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using flowio::CompressionStatistics;
using flowio::exchange::CompressionMode;
using flowio::exchange::CompressionRule;
using flowio::exchange::CompressionSettings;
using flowio::exchange::CompressStage;
using flowio::exchange::kFrameHeaderBytes;

CompressionRule rule_for(CompressionMode mode) {
  CompressionSettings settings;
  settings.mode = mode;
  settings.min_bytes = 1024;
  return CompressionRule(settings, 4);
}

// A staging buffer holding `bytes` bytes of 8-byte values, each zero with
// probability `zeros`, behind room for the header; and its payload.
struct Packed {
  std::vector<std::byte> staging;
  std::vector<std::byte> payload;
  Packed(std::size_t bytes, double zeros, std::uint64_t seed)
      : staging(flowio::exchange::frame_bound(bytes)), payload(bytes) {
    std::mt19937_64 rng(seed);
    std::bernoulli_distribution zero(zeros);
    for (std::size_t at = 0; at + 8 <= bytes; at += 8) {
      const std::uint64_t value = zero(rng) ? 0 : rng();
      std::memcpy(payload.data() + at, &value, 8);
    }
    std::memcpy(staging.data() + kFrameHeaderBytes, payload.data(), bytes);
  }
};

}  // namespace

// With compression off, the frame is the staging buffer itself, and decoding reads it in place.
TEST_CASE("Exchange.CompressStage.RawInPlace") {
  CompressionRule rule = rule_for(CompressionMode::off);
  CompressStage stage(rule);
  Packed packed(100000, 0.9, 1);
  std::vector<std::byte> spare(flowio::exchange::compress_capacity(packed.payload.size()));
  CompressionStatistics statistics;
  const auto frame = stage.encode(2, packed.staging, packed.payload.size(), spare, 4, statistics);
  CHECK(frame.data() == packed.staging.data());
  CHECK(frame.size() == packed.staging.size());
  CHECK(statistics.mode == "off");
  CHECK(statistics.decisions.forced_off == 1);
  CHECK(statistics.data_bytes_out == statistics.data_bytes_in + kFrameHeaderBytes);
  std::vector<std::byte> scratch;
  const auto plain = stage.decode(frame, packed.payload.size(), scratch, statistics);
  CHECK(plain.data() == frame.data() + kFrameHeaderBytes);
  CHECK(std::vector<std::byte>(plain.begin(), plain.end()) == packed.payload);
  CHECK(scratch.empty());
}

// Forced on, compressible data go through the spare buffer and come back through scratch.
TEST_CASE("Exchange.CompressStage.CompressedThroughSpare") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  Packed packed(200000, 0.75, 2);
  std::vector<std::byte> spare(flowio::exchange::compress_capacity(packed.payload.size()));
  CompressionStatistics sent;
  const auto frame = stage.encode(1, packed.staging, packed.payload.size(), spare, 4, sent);
  CHECK(frame.data() == spare.data());
  CHECK(frame.size() < packed.payload.size() / 2);
  CHECK(sent.decisions.compressed == 1);
  CHECK(sent.compress_seconds > 0);
  CHECK(sent.data_bytes_out == static_cast<std::int64_t>(frame.size()));
  std::vector<std::byte> scratch;
  CompressionStatistics received;
  const auto plain = stage.decode(frame, packed.payload.size(), scratch, received);
  CHECK(plain.data() == scratch.data());
  CHECK(scratch == packed.payload);
  CHECK(received.received_bytes_in == static_cast<std::int64_t>(frame.size()));
  CHECK(received.received_bytes_out == static_cast<std::int64_t>(packed.payload.size()));
  CHECK(received.decompress_seconds > 0);
  CHECK(rule.estimates().decompress_bytes_per_second.has_value());
}

// Forced on, random data do not shrink: sent raw from staging and counted as not shrinking.
TEST_CASE("Exchange.CompressStage.NotShrinkingGoesRaw") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  Packed packed(50000, 0.0, 3);
  std::vector<std::byte> spare(flowio::exchange::compress_capacity(packed.payload.size()));
  CompressionStatistics statistics;
  const auto frame = stage.encode(1, packed.staging, packed.payload.size(), spare, 4, statistics);
  CHECK(frame.data() == packed.staging.data());
  CHECK(statistics.decisions.compressed == 0);
  CHECK(statistics.decisions.not_shrinking == 1);
  std::vector<std::byte> scratch;
  const auto plain = stage.decode(frame, packed.payload.size(), scratch, statistics);
  CHECK(std::vector<std::byte>(plain.begin(), plain.end()) == packed.payload);
}

// Buffers too small are refused; a frame of another length than expected is rejected.
TEST_CASE("Exchange.CompressStage.Checks") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  Packed packed(4096, 0.5, 4);
  std::vector<std::byte> small_spare(100);
  CompressionStatistics statistics;
  CHECK_THROWS_AS(stage.encode(1, packed.staging, 4096, small_spare, 1, statistics),
                  flowio::UsageError);
  std::vector<std::byte> spare(flowio::exchange::compress_capacity(4096));
  const auto frame = stage.encode(1, packed.staging, 4096, spare, 1, statistics);
  std::vector<std::byte> scratch;
  CHECK_THROWS_AS(stage.decode(frame, 4095, scratch, statistics),
                  flowio::exchange::MalformedMessage);
  CHECK_THROWS_AS(stage.decode(frame.first(frame.size() - 1), 4096, scratch, statistics),
                  flowio::exchange::MalformedMessage);
}

// Metadata word lists round-trip and are counted as metadata.
TEST_CASE("Exchange.CompressStage.MetadataWords") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  std::vector<std::int64_t> words = {2, 4000};
  for (std::int64_t i = 0; i < 4000; ++i) words.insert(words.end(), {i * 4096, 512});
  CompressionStatistics statistics;
  const std::vector<std::byte> frame = stage.encode_words(3, words, 3, statistics);
  CHECK(statistics.metadata_bytes_in == static_cast<std::int64_t>(words.size() * 8));
  CHECK(statistics.metadata_bytes_out == static_cast<std::int64_t>(frame.size()));
  CHECK(frame.size() < words.size() * 8 / 2);
  CHECK(statistics.data_bytes_in == 0);
  CHECK(stage.decode_words(frame, words.size(), statistics) == words);
  CHECK_THROWS_AS(stage.decode_words(frame, words.size() - 1, statistics),
                  flowio::exchange::MalformedMessage);
}

// Statistics of several stages add up.
TEST_CASE("Exchange.CompressStage.AddStatistics") {
  CompressionStatistics a;
  a.mode = "auto";
  a.data_bytes_in = 10;
  a.decisions.fast_link = 2;
  CompressionStatistics b;
  b.data_bytes_in = 5;
  b.decompress_seconds = 0.5;
  b.decisions.fast_link = 1;
  b.decisions.no_saving = 4;
  CompressionStatistics sum;
  flowio::exchange::add_statistics(sum, a);
  flowio::exchange::add_statistics(sum, b);
  CHECK(sum.mode == "auto");
  CHECK(sum.data_bytes_in == 15);
  CHECK(sum.decompress_seconds == 0.5);
  CHECK(sum.decisions.fast_link == 3);
  CHECK(sum.decisions.no_saving == 4);
}
