// The compress and decompress stage bodies: raw messages are sent from
// where they lie and received where they belong, compressed ones go
// through the spare and scratch buffers, every decision and byte is
// counted, and metadata word lists round-trip.
#include "exchange/compress_stage.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using flowio::CompressionStatistics;
using namespace flowio::exchange;

CompressionRule rule_for(CompressionMode mode) {
  CompressionSettings settings;
  settings.mode = mode;
  settings.min_bytes = 1024;
  return CompressionRule(settings, 4);
}

// `bytes` bytes of 8-byte values, each zero with probability `zeros`.
std::vector<std::byte> message(std::size_t bytes, double zeros, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution zero(zeros);
  std::vector<std::byte> data(bytes);
  for (std::size_t at = 0; at + 8 <= bytes; at += 8) {
    const std::uint64_t value = zero(rng) ? 0 : rng();
    std::memcpy(data.data() + at, &value, 8);
  }
  return data;
}

// What a receiver's two-block receive leaves: the header aside, the
// payload at the start of a region of the expected size.
struct Received {
  std::vector<std::byte> header;
  std::vector<std::byte> region;
  std::size_t payload_bytes;
  Received(const CompressStage::Outgoing& sent, std::size_t expected)
      : header(sent.header.begin(), sent.header.end()),
        region(expected, std::byte{0x77}),
        payload_bytes(sent.payload.size()) {
    std::memcpy(region.data(), sent.payload.data(), sent.payload.size());
  }
  // The stage's decode of what was received; returns the message's size.
  std::size_t decode(CompressStage& stage, std::vector<std::byte>& scratch,
                     CompressionStatistics& statistics) {
    return stage.decode(header, region, payload_bytes, scratch, statistics);
  }
};

}  // namespace

// With compression off, the message goes raw from where it lies and is received where it belongs.
TEST_CASE("Exchange.CompressStage.RawInPlace") {
  CompressionRule rule = rule_for(CompressionMode::off);
  CompressStage stage(rule);
  const std::vector<std::byte> data = message(100000, 0.9, 1);
  std::vector<std::byte> spare;
  CompressionStatistics statistics;
  const auto sent = stage.encode(2, data, spare, 4, statistics);
  CHECK(spare.empty());  // raw messages take no frame memory
  CHECK(sent.payload.data() == data.data());
  CHECK(sent.payload.size() == data.size());
  CHECK_FALSE(sent.compressed);
  CHECK(statistics.mode == "off");
  CHECK(statistics.decisions.forced_off == 1);
  CHECK(statistics.data_bytes_out == statistics.data_bytes_in + kFrameHeaderBytes);
  Received received(sent, data.size());
  std::vector<std::byte> scratch;
  CHECK(received.decode(stage, scratch, statistics) == data.size());
  CHECK(received.region == data);
  CHECK(scratch.empty());
  CHECK(statistics.received_bytes_out == static_cast<std::int64_t>(data.size()));
}

// Forced on, compressible data are framed in the spare buffer and decoded in place.
TEST_CASE("Exchange.CompressStage.CompressedThroughSpare") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  const std::vector<std::byte> data = message(200000, 0.75, 2);
  std::vector<std::byte> spare;
  CompressionStatistics sent_statistics;
  const auto sent = stage.encode(1, data, spare, 4, sent_statistics);
  CHECK(sent.compressed);
  CHECK(sent.payload.data() == spare.data() + kFrameHeaderBytes);
  CHECK(sent.frame_bytes() < data.size() / 2);
  CHECK(sent_statistics.decisions.compressed == 1);
  CHECK(sent_statistics.compress_seconds > 0);
  CHECK(sent_statistics.data_bytes_out == static_cast<std::int64_t>(sent.frame_bytes()));
  Received received(sent, data.size() + 64);  // room to spare, as a read may have
  std::vector<std::byte> scratch;
  CompressionStatistics received_statistics;
  CHECK(received.decode(stage, scratch, received_statistics) == data.size());
  CHECK(std::equal(data.begin(), data.end(), received.region.begin()));
  CHECK(received_statistics.received_bytes_in == static_cast<std::int64_t>(sent.frame_bytes()));
  CHECK(received_statistics.received_bytes_out == static_cast<std::int64_t>(data.size()));
  CHECK(received_statistics.decompress_seconds > 0);
  CHECK(rule.estimates().decompress_bytes_per_second.has_value());
}

// Forced on, random data do not shrink: sent raw from where they lie, counted as not shrinking.
TEST_CASE("Exchange.CompressStage.NotShrinkingGoesRaw") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  const std::vector<std::byte> data = message(50000, 0.0, 3);
  std::vector<std::byte> spare;
  CompressionStatistics statistics;
  const auto sent = stage.encode(1, data, spare, 4, statistics);
  CHECK(sent.payload.data() == data.data());
  CHECK_FALSE(sent.compressed);
  CHECK(statistics.decisions.compressed == 0);
  CHECK(statistics.decisions.not_shrinking == 1);
  Received received(sent, data.size());
  std::vector<std::byte> scratch;
  received.decode(stage, scratch, statistics);
  CHECK(received.region == data);
}

// A spare buffer too small is grown; a frame cut short or too long for its receiver is rejected.
TEST_CASE("Exchange.CompressStage.Checks") {
  CompressionRule rule = rule_for(CompressionMode::on);
  CompressStage stage(rule);
  const std::vector<std::byte> data = message(4096, 0.5, 4);
  std::vector<std::byte> spare(100);  // too small: grown as needed
  CompressionStatistics statistics;
  const auto sent = stage.encode(1, data, spare, 1, statistics);
  CHECK(spare.size() >= flowio::exchange::compress_capacity(data.size()));
  REQUIRE(sent.compressed);
  std::vector<std::byte> scratch;
  Received shorter(sent, data.size() - 1);
  CHECK_THROWS_AS(shorter.decode(stage, scratch, statistics), flowio::exchange::MalformedMessage);
  Received cut(sent, data.size());
  CHECK_THROWS_AS(stage.decode(cut.header, cut.region, cut.payload_bytes - 1, scratch, statistics),
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
