// Compression of exchanged messages: LZO1X-1 frames.
//
// A message that may be compressed (a client's data for one aggregator and
// one buffer iteration, or a list of metadata words) travels as a frame: a
// 24-byte header, then the payload, raw or compressed with LZO1X-1. A
// payload that would not shrink travels raw, so a frame is never longer
// than frame_bound(original bytes): a receiver that knows how many bytes
// it expects posts a receive of exactly that size, whatever the sender
// decided.
//
// Header layout, in the native byte order (every rank of a job runs the
// same build on the same architecture, as for all of flowio's messages):
//   bytes  0..3   magic "FZ", format version 1, method (0 raw, 1 LZO1X-1)
//   bytes  4..7   Adler-32 of a compressed payload; zero for a raw one
//   bytes  8..15  original (uncompressed) bytes
//   bytes 16..23  payload bytes that follow the header
// The payload starts 8-byte aligned when the frame does, so a raw frame of
// metadata words can be read in place.
//
// A frame from a peer is checked before any byte of it is used: a wrong
// magic, method or length, a compressed payload whose checksum does not
// match, that does not decode to exactly the announced bytes, or that
// would read past its end or write past the destination is rejected with
// MalformedMessage; decoding never reads outside the frame or writes
// outside the destination. The checksum covers compressed payloads only:
// it is cheap there (they are short), and a decoder is where a changed
// byte would do harm (everything after it decodes differently). A raw
// payload is data as MPI delivered it, as for every uncompressed message.
//
// Thread safety: every function may be called from any thread at once.
// Compression uses LZO's work memory, one block per calling thread
// (allocated on a thread's first compression, kept until it exits).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flowio/error.h"

namespace flowio::exchange {

// A frame that is not one: from a peer that is broken, or a message that
// was cut short. Thrown by every function that reads a frame.
class MalformedMessage : public MpiError {
 public:
  explicit MalformedMessage(const std::string& why,
                            std::source_location where = std::source_location::current())
      : MpiError("malformed compressed message: " + why, 0, where) {}
};

enum class FrameMethod : std::uint8_t { raw = 0, lzo1x_1 = 1 };

inline constexpr std::size_t kFrameHeaderBytes = 24;

struct FrameHeader {
  FrameMethod method = FrameMethod::raw;
  std::size_t original_bytes = 0;
  std::size_t payload_bytes = 0;
  std::size_t frame_bytes() const { return kFrameHeaderBytes + payload_bytes; }
};

// The longest frame a payload of `original_bytes` can become: what a
// receiver that knows the original size posts.
constexpr std::size_t frame_bound(std::size_t original_bytes) {
  return kFrameHeaderBytes + original_bytes;
}

// The room compress_frame needs in its destination: LZO's output for
// incompressible input is longer than the input before the raw fallback
// replaces it.
std::size_t compress_capacity(std::size_t original_bytes);

struct EncodedFrame {
  std::size_t frame_bytes = 0;  // header + payload
  bool compressed = false;      // false: the payload went raw
};

// Writes `source` as a frame at the start of `destination`, compressed if
// that makes it shorter, else raw. `destination` must hold
// compress_capacity(source.size()) bytes (UsageError(invalid_argument)
// otherwise) and must not overlap `source`.
EncodedFrame compress_frame(std::span<const std::byte> source, std::span<std::byte> destination);

// Writes the header of a raw frame whose `payload_bytes` bytes already sit
// at frame[kFrameHeaderBytes...] (a packer wrote them there, saving a
// copy). `frame` must hold frame_bound(payload_bytes) bytes
// (UsageError(invalid_argument) otherwise). Returns the frame's length.
std::size_t seal_raw_frame(std::span<std::byte> frame, std::size_t payload_bytes);

// The header of `frame` (exactly the received bytes), checked: the frame
// is at least a header, the magic, version and method are known, the
// payload length matches the frame's, a raw payload is as long as the
// original, a compressed one shorter and matching its checksum, and the
// original is at most `max_original_bytes` (what the receiver is ready to
// take). Throws MalformedMessage otherwise.
FrameHeader read_frame_header(std::span<const std::byte> frame,
                              std::size_t max_original_bytes = SIZE_MAX);

// The payload of a raw frame, in place, after read_frame_header's checks.
// Throws MalformedMessage for a malformed or a compressed frame.
std::span<const std::byte> raw_payload(std::span<const std::byte> frame);

// The header of a raw frame of `payload_bytes`, for a sender that sends
// the header and the payload from separate buffers (one send with a
// two-block datatype, the payload straight from where it lies).
std::array<std::byte, kFrameHeaderBytes> raw_frame_header(std::size_t payload_bytes);

// A frame received in two places: a receiver may put the header aside
// and the payload straight where the raw data belong (one receive with a
// two-block datatype), so that a raw frame needs no copy at all. `header`
// is the kFrameHeaderBytes header; `region` is where the original bytes
// belong, at most region.size() of them (what the receiver is ready to
// take), of which the first `payload_bytes` (what arrived) hold the
// payload. Checks as read_frame_header does; a compressed payload is
// moved to `scratch` and decoded into the start of `region`. Returns the
// header, whose original_bytes says how much of `region` now holds the
// message; throws MalformedMessage.
FrameHeader decode_in_place(std::span<const std::byte> header, std::span<std::byte> region,
                            std::size_t payload_bytes, std::vector<std::byte>& scratch);

// Decodes `frame` into `destination`, whose size must equal the frame's
// original bytes (the receiver knows what it expects). Throws
// MalformedMessage if the frame is malformed, announces another size, or
// does not decode to exactly that many bytes.
void decompress_frame(std::span<const std::byte> frame, std::span<std::byte> destination);

// A frame of metadata words (the word lists of access_codec.h), compressed
// when that makes it shorter.
std::vector<std::byte> compress_words(std::span<const std::int64_t> words);

// The words of a frame made by compress_words. Throws MalformedMessage if
// the frame is malformed, its original length is not a whole number of
// words, or it holds more than `max_words` words (a bound the receiver
// sets, so that a corrupt header cannot make it allocate without limit).
std::vector<std::int64_t> decompress_words(std::span<const std::byte> frame, std::size_t max_words);

// What compressing a sample of a message measured: its bytes before and
// after (at most before: a slice that would not shrink counts as raw),
// the time compressing took on this thread, and the time decompressing
// the slices that shrank took.
struct CompressionSample {
  std::int64_t bytes_in = 0;
  std::int64_t bytes_out = 0;
  double seconds = 0;
  std::int64_t bytes_decompressed = 0;  // original bytes of the slices decoded
  double decompress_seconds = 0;
};

// Compresses at most `sample_bytes` bytes of `message`, taken as up to four
// equal slices spread over it (the whole message when it is that short),
// each compressed on its own and decompressed again, and measures the
// ratio and both times. The output is discarded. Small slices compress a
// little worse than the whole message, so the sample errs towards not
// compressing.
CompressionSample sample_compression(std::span<const std::byte> message, std::size_t sample_bytes);

}  // namespace flowio::exchange
