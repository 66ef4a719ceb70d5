// The LZO1X-1 frame codec: frames round-trip, shrink when the data
// compress and go raw when they do not, and a frame that was cut short or
// changed is rejected with MalformedMessage without reading or writing
// outside its buffers (checked under --config=asan).
#include "exchange/compress.h"

#include <doctest/doctest.h>
#include <lzo/lzo1x.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "exchange/access_codec.h"

namespace {

using namespace flowio::exchange;

// `bytes` bytes of 8-byte values, each zero with probability
// `zero_share`, else random: the benchmark's data.
std::vector<std::byte> values(std::size_t bytes, double zero_share, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution zero(zero_share);
  std::vector<std::byte> data(bytes);
  for (std::size_t at = 0; at < bytes; at += 8) {
    const std::uint64_t value = zero(rng) ? 0 : rng();
    std::memcpy(data.data() + at, &value, std::min<std::size_t>(8, bytes - at));
  }
  return data;
}

// A frame of `data`, cut to its length.
std::vector<std::byte> frame_of(const std::vector<std::byte>& data) {
  std::vector<std::byte> frame(compress_capacity(data.size()));
  frame.resize(compress_frame(data, frame).frame_bytes);
  return frame;
}

std::vector<std::byte> decoded(const std::vector<std::byte>& frame, std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  decompress_frame(frame, out);
  return out;
}

}  // namespace

// Data that compress become a shorter LZO frame that decodes to the same bytes.
TEST_CASE("Exchange.Compress.CompressibleRoundTrip") {
  for (const double zeros : {0.5, 0.75, 1.0}) {
    const std::vector<std::byte> data = values(1 << 20, zeros, 7);
    const std::vector<std::byte> frame = frame_of(data);
    const auto header = read_frame_header(frame);
    CHECK(header.method == FrameMethod::lzo1x_1);
    CHECK(header.original_bytes == data.size());
    CHECK(frame.size() < data.size() * (zeros == 1.0 ? 0.01 : 0.8));
    CHECK(decoded(frame, data.size()) == data);
  }
}

// Random data go raw: the frame is the header and the bytes, never longer.
TEST_CASE("Exchange.Compress.IncompressibleGoesRaw") {
  const std::vector<std::byte> data = values(300001, 0.0, 11);
  std::vector<std::byte> frame(compress_capacity(data.size()));
  const auto encoded = compress_frame(data, frame);
  CHECK_FALSE(encoded.compressed);
  CHECK(encoded.frame_bytes == frame_bound(data.size()));
  frame.resize(encoded.frame_bytes);
  CHECK(read_frame_header(frame).method == FrameMethod::raw);
  const auto payload = raw_payload(frame);
  CHECK(std::vector<std::byte>(payload.begin(), payload.end()) == data);
  CHECK(decoded(frame, data.size()) == data);
}

// An empty message is a header alone, and short messages round-trip.
TEST_CASE("Exchange.Compress.EmptyAndTiny") {
  for (const std::size_t bytes : {0, 1, 7, 64}) {
    const std::vector<std::byte> data = values(bytes, 0.5, bytes);
    const std::vector<std::byte> frame = frame_of(data);
    CHECK(frame.size() <= frame_bound(bytes));
    CHECK(decoded(frame, bytes) == data);
  }
}

// A payload packed in place behind the header becomes a raw frame without a copy.
TEST_CASE("Exchange.Compress.SealRawInPlace") {
  const std::vector<std::byte> data = values(4096, 0.5, 3);
  std::vector<std::byte> frame(frame_bound(data.size()));
  std::memcpy(frame.data() + kFrameHeaderBytes, data.data(), data.size());
  CHECK(seal_raw_frame(frame, data.size()) == frame.size());
  CHECK(decoded(frame, data.size()) == data);
  std::vector<std::byte> short_frame(frame_bound(data.size()) - 1);
  CHECK_THROWS_AS(seal_raw_frame(short_frame, data.size()), flowio::UsageError);
}

// A destination below compress_capacity is refused before anything is written.
TEST_CASE("Exchange.Compress.CapacityChecked") {
  const std::vector<std::byte> data = values(1000, 0.0, 5);
  std::vector<std::byte> frame(compress_capacity(data.size()) - 1);
  CHECK_THROWS_AS(compress_frame(data, frame), flowio::UsageError);
}

// A frame cut short anywhere is rejected, whether or not its header was fixed up to match.
TEST_CASE("Exchange.Compress.TruncatedFramesRejected") {
  const std::vector<std::byte> data = values(4000, 0.75, 13);
  const std::vector<std::byte> frame = frame_of(data);
  REQUIRE(read_frame_header(frame).method == FrameMethod::lzo1x_1);
  for (std::size_t length = 0; length < frame.size(); ++length) {
    // Exactly `length` bytes on the heap: any read past them is an ASan error.
    std::vector<std::byte> cut(frame.begin(), frame.begin() + static_cast<long>(length));
    std::vector<std::byte> out(data.size());
    CHECK_THROWS_AS(decompress_frame(cut, out), MalformedMessage);
    if (length > kFrameHeaderBytes) {
      // A broken peer that announced the shorter payload (and its
      // checksum) still does not get past the decoder's own checks.
      const std::uint64_t payload = length - kFrameHeaderBytes;
      std::memcpy(cut.data() + 16, &payload, sizeof payload);
      const std::uint32_t sum = static_cast<std::uint32_t>(lzo_adler32(
          1, reinterpret_cast<const unsigned char*>(cut.data() + kFrameHeaderBytes), payload));
      std::memcpy(cut.data() + 4, &sum, sizeof sum);
      CHECK_THROWS_AS(decompress_frame(cut, out), MalformedMessage);
    }
  }
}

// Every single changed byte of a compressed frame, header or payload, is rejected.
TEST_CASE("Exchange.Compress.ChangedBytesRejected") {
  const std::vector<std::byte> data = values(2000, 0.6, 17);
  const std::vector<std::byte> frame = frame_of(data);
  REQUIRE(read_frame_header(frame).method == FrameMethod::lzo1x_1);
  std::mt19937 rng(19);
  for (std::size_t at = 0; at < frame.size(); ++at) {
    std::vector<std::byte> changed = frame;
    changed[at] ^= static_cast<std::byte>(1 + rng() % 255);
    std::vector<std::byte> out(data.size());
    CHECK_THROWS_AS(decompress_frame(changed, out), MalformedMessage);
  }
}

// Garbage behind a well-formed header (a broken peer) never runs off either buffer.
TEST_CASE("Exchange.Compress.GarbagePayloadStaysInBounds") {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 100; ++trial) {
    const std::size_t original = 1 + rng() % 5000;
    const std::size_t payload = 1 + rng() % original;
    std::vector<std::byte> garbage(kFrameHeaderBytes + payload);
    for (std::byte& byte : garbage) byte = static_cast<std::byte>(rng());
    const std::uint8_t tag[4] = {'F', 'Z', 1, static_cast<std::uint8_t>(FrameMethod::lzo1x_1)};
    const std::uint32_t sum = static_cast<std::uint32_t>(lzo_adler32(
        1, reinterpret_cast<const unsigned char*>(garbage.data() + kFrameHeaderBytes), payload));
    const std::uint64_t lengths[2] = {original, payload};
    std::memcpy(garbage.data(), tag, sizeof tag);
    std::memcpy(garbage.data() + 4, &sum, sizeof sum);
    std::memcpy(garbage.data() + 8, lengths, sizeof lengths);
    std::vector<std::byte> out(original);
    // Decoding to exactly `original` bytes by chance is allowed; anything
    // else must be MalformedMessage, and ASan checks the bounds.
    try {
      decompress_frame(garbage, out);
    } catch (const MalformedMessage&) {
    }
  }
}

// A frame that announces another size than the receiver expects is rejected.
TEST_CASE("Exchange.Compress.SizeMismatchRejected") {
  const std::vector<std::byte> data = values(10000, 0.9, 29);
  const std::vector<std::byte> frame = frame_of(data);
  std::vector<std::byte> smaller(data.size() - 1);
  std::vector<std::byte> larger(data.size() + 1);
  CHECK_THROWS_AS(decompress_frame(frame, smaller), MalformedMessage);
  CHECK_THROWS_AS(decompress_frame(frame, larger), MalformedMessage);
  CHECK_THROWS_AS(read_frame_header(frame, data.size() - 1), MalformedMessage);
  CHECK_THROWS_AS(raw_payload(frame), MalformedMessage);
}

// A frame received split (header aside, payload where the data belong) decodes in place.
TEST_CASE("Exchange.Compress.InPlaceReceive") {
  std::vector<std::byte> scratch;
  // Raw: the header made apart, the payload already where it belongs.
  const std::vector<std::byte> plain = values(50000, 0.0, 43);
  std::vector<std::byte> region = plain;
  const auto raw_header = flowio::exchange::raw_frame_header(plain.size());
  CHECK(flowio::exchange::decode_in_place(raw_header, region, plain.size(), scratch).method ==
        FrameMethod::raw);
  CHECK(region == plain);
  // Compressed: the payload arrives at the start of the region.
  const std::vector<std::byte> data = values(50000, 0.8, 47);
  const std::vector<std::byte> frame = frame_of(data);
  const std::size_t payload = frame.size() - kFrameHeaderBytes;
  const std::span<const std::byte> header(frame.data(), kFrameHeaderBytes);
  region.assign(data.size(), std::byte{0x55});
  std::memcpy(region.data(), frame.data() + kFrameHeaderBytes, payload);
  CHECK(flowio::exchange::decode_in_place(header, region, payload, scratch).method ==
        FrameMethod::lzo1x_1);
  CHECK(region == data);
  // A region larger than the message (a read that stops at end of file
  // receives less than it could): the message fills its start.
  std::vector<std::byte> larger(data.size() + 100, std::byte{0x33});
  std::memcpy(larger.data(), frame.data() + kFrameHeaderBytes, payload);
  CHECK(flowio::exchange::decode_in_place(header, larger, payload, scratch).original_bytes ==
        data.size());
  CHECK(std::equal(data.begin(), data.end(), larger.begin()));
  CHECK(larger.back() == std::byte{0x33});
  // Fewer payload bytes than announced, more than the region, or a region
  // smaller than the message: rejected.
  std::memcpy(region.data(), frame.data() + kFrameHeaderBytes, payload);
  CHECK_THROWS_AS(flowio::exchange::decode_in_place(header, region, payload - 1, scratch),
                  MalformedMessage);
  CHECK_THROWS_AS(flowio::exchange::decode_in_place(header, region, region.size() + 1, scratch),
                  MalformedMessage);
  CHECK_THROWS_AS(
      flowio::exchange::decode_in_place(header, std::span(region).first(1000), payload, scratch),
      MalformedMessage);
  CHECK_THROWS_AS(flowio::exchange::decode_in_place(header.first(8), region, payload, scratch),
                  MalformedMessage);
}

// Metadata word lists (access_codec's pieces encoding) round-trip, shrink, and are bounded.
TEST_CASE("Exchange.Compress.MetadataWords") {
  std::vector<flowio::core::Piece> pieces;
  for (std::int64_t i = 0; i < 5000; ++i) pieces.push_back({i * 4096 + (i % 3) * 8, 800});
  const std::vector<std::int64_t> words = flowio::exchange::encode_pieces(pieces);
  const std::vector<std::byte> frame = compress_words(words);
  CHECK(frame.size() < words.size() * sizeof(std::int64_t) / 2);
  CHECK(decompress_words(frame, words.size()) == words);
  CHECK_THROWS_AS(decompress_words(frame, words.size() - 1), MalformedMessage);
  // A frame of 12 bytes is not a word list.
  const std::vector<std::byte> odd = frame_of(values(12, 0.0, 31));
  CHECK_THROWS_AS(decompress_words(odd, 100), MalformedMessage);
  CHECK(decompress_words(compress_words({}), 0).empty());
}

// A sample is at most the budget, its ratio tells zeros from random data, and it times decoding.
TEST_CASE("Exchange.Compress.SampleRatio") {
  const std::vector<std::byte> zeros = values(1 << 20, 1.0, 37);
  const std::vector<std::byte> random = values(1 << 20, 0.0, 41);
  const auto zero_sample = sample_compression(zeros, 16384);
  const auto random_sample = sample_compression(random, 16384);
  CHECK(zero_sample.bytes_in == 16384);
  CHECK(zero_sample.bytes_out < zero_sample.bytes_in / 20);
  CHECK(random_sample.bytes_out == random_sample.bytes_in);
  CHECK(random_sample.seconds > 0);
  // Slices that shrink are decoded again and timed; raw ones are not.
  CHECK(zero_sample.bytes_decompressed == zero_sample.bytes_in);
  CHECK(zero_sample.decompress_seconds > 0);
  CHECK(random_sample.bytes_decompressed == 0);
  // A message shorter than the budget is sampled whole.
  const auto whole = sample_compression(std::span(zeros).first(1000), 16384);
  CHECK(whole.bytes_in == 1000);
  CHECK(sample_compression({}, 16384).bytes_in == 0);
}
