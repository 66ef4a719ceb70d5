#include "exchange/compress.h"

#include <lzo/lzo1x.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>

namespace flowio::exchange {
namespace {

constexpr std::uint8_t kMagic0 = 'F';
constexpr std::uint8_t kMagic1 = 'Z';
constexpr std::uint8_t kVersion = 1;

// LZO's documented worst case for LZO1X-1 output.
constexpr std::size_t lzo_bound(std::size_t bytes) { return bytes + bytes / 16 + 64 + 3; }

void initialize_lzo() {
  static std::once_flag once;
  std::call_once(once, [] {
    // lzo_init checks that the library was built for this ABI (type sizes);
    // a mismatch would corrupt data, so it is fatal to every call.
    if (lzo_init() != LZO_E_OK) {
      throw UsageError(ErrorCode::unsupported,
                       "liblzo2 does not match the headers it was built with");
    }
  });
}

// LZO1X-1's dictionary, one per thread. new[] aligns to
// __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16 here), more than the lzo_align_t
// LZO asks for.
lzo_voidp work_memory() {
  thread_local std::unique_ptr<std::byte[]> memory;
  if (!memory) memory = std::make_unique<std::byte[]>(LZO1X_1_MEM_COMPRESS);
  return memory.get();
}

// Compresses `source` into `destination` (at least lzo_bound bytes);
// returns the compressed length. LZO1X-1 cannot fail on valid arguments,
// so any other result is a broken library.
std::size_t lzo_compress(std::span<const std::byte> source, std::byte* destination) {
  initialize_lzo();
  lzo_uint length = 0;
  const int code =
      lzo1x_1_compress(reinterpret_cast<const unsigned char*>(source.data()), source.size(),
                       reinterpret_cast<unsigned char*>(destination), &length, work_memory());
  if (code != LZO_E_OK) {
    throw UsageError(ErrorCode::unsupported,
                     "lzo1x_1_compress failed with LZO error " + std::to_string(code));
  }
  return length;
}

std::uint32_t checksum(const std::byte* bytes, std::size_t length) {
  return static_cast<std::uint32_t>(
      lzo_adler32(1, reinterpret_cast<const unsigned char*>(bytes), length));
}

// Writes the header of the frame at `frame`, whose payload is in place.
void write_header(std::byte* frame, FrameMethod method, std::uint64_t original,
                  std::uint64_t payload) {
  const std::uint8_t tag[4] = {kMagic0, kMagic1, kVersion, static_cast<std::uint8_t>(method)};
  const std::uint32_t sum =
      method == FrameMethod::raw ? 0 : checksum(frame + kFrameHeaderBytes, payload);
  std::memcpy(frame, tag, sizeof tag);
  std::memcpy(frame + 4, &sum, sizeof sum);
  std::memcpy(frame + 8, &original, sizeof original);
  std::memcpy(frame + 16, &payload, sizeof payload);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::size_t compress_capacity(std::size_t original_bytes) {
  return kFrameHeaderBytes + lzo_bound(original_bytes);
}

EncodedFrame compress_frame(std::span<const std::byte> source, std::span<std::byte> destination) {
  if (destination.size() < compress_capacity(source.size())) {
    throw UsageError(ErrorCode::invalid_argument,
                     "compress_frame: destination of " + std::to_string(destination.size()) +
                         " bytes, needs " + std::to_string(compress_capacity(source.size())));
  }
  const std::size_t compressed = lzo_compress(source, destination.data() + kFrameHeaderBytes);
  if (compressed < source.size()) {
    write_header(destination.data(), FrameMethod::lzo1x_1, source.size(), compressed);
    return {kFrameHeaderBytes + compressed, true};
  }
  // The compressed form was written over the same bytes; the raw copy
  // replaces it.
  if (!source.empty()) {
    std::memcpy(destination.data() + kFrameHeaderBytes, source.data(), source.size());
  }
  write_header(destination.data(), FrameMethod::raw, source.size(), source.size());
  return {kFrameHeaderBytes + source.size(), false};
}

std::size_t seal_raw_frame(std::span<std::byte> frame, std::size_t payload_bytes) {
  if (frame.size() < frame_bound(payload_bytes)) {
    throw UsageError(ErrorCode::invalid_argument,
                     "seal_raw_frame: frame of " + std::to_string(frame.size()) +
                         " bytes cannot hold a payload of " + std::to_string(payload_bytes));
  }
  write_header(frame.data(), FrameMethod::raw, payload_bytes, payload_bytes);
  return frame_bound(payload_bytes);
}

namespace {

// The checks of read_frame_header, for a header and the payload bytes
// that arrived with it (wherever they were put).
FrameHeader check_frame(const std::byte* header_bytes, std::span<const std::byte> payload,
                        std::size_t max_original_bytes) {
  std::uint8_t tag[4];
  std::uint32_t sum = 0;
  std::uint64_t original = 0;
  std::uint64_t announced = 0;
  std::memcpy(tag, header_bytes, sizeof tag);
  std::memcpy(&sum, header_bytes + 4, sizeof sum);
  std::memcpy(&original, header_bytes + 8, sizeof original);
  std::memcpy(&announced, header_bytes + 16, sizeof announced);
  if (tag[0] != kMagic0 || tag[1] != kMagic1 || tag[2] != kVersion) {
    throw MalformedMessage("bad magic or version");
  }
  if (tag[3] != static_cast<std::uint8_t>(FrameMethod::raw) &&
      tag[3] != static_cast<std::uint8_t>(FrameMethod::lzo1x_1)) {
    throw MalformedMessage("unknown method " + std::to_string(tag[3]));
  }
  FrameHeader header;
  header.method = static_cast<FrameMethod>(tag[3]);
  if (announced != payload.size()) {
    throw MalformedMessage("header announces " + std::to_string(announced) +
                           " payload bytes, the frame holds " + std::to_string(payload.size()));
  }
  if (original > max_original_bytes) {
    throw MalformedMessage("frame announces " + std::to_string(original) + " bytes, at most " +
                           std::to_string(max_original_bytes) + " expected");
  }
  if (header.method == FrameMethod::raw ? announced != original : announced >= original) {
    throw MalformedMessage("payload of " + std::to_string(announced) + " bytes for " +
                           std::to_string(original) + " original bytes");
  }
  const std::uint32_t expected_sum =
      header.method == FrameMethod::raw ? 0 : checksum(payload.data(), payload.size());
  if (sum != expected_sum) throw MalformedMessage("checksum mismatch");
  header.original_bytes = static_cast<std::size_t>(original);
  header.payload_bytes = payload.size();
  return header;
}

// Decodes the checked compressed `payload` into `destination` (exactly
// the original bytes; the two must not overlap).
void decode_payload(std::span<const std::byte> payload, std::span<std::byte> destination) {
  initialize_lzo();
  // The _safe decoder checks every read against the input's end and every
  // write against `length` (the destination's size), so a corrupt payload
  // stops with an error code instead of running off either buffer.
  lzo_uint length = destination.size();
  const int code =
      lzo1x_decompress_safe(reinterpret_cast<const unsigned char*>(payload.data()), payload.size(),
                            reinterpret_cast<unsigned char*>(destination.data()), &length, nullptr);
  if (code != LZO_E_OK) {
    throw MalformedMessage("LZO1X decoding failed with LZO error " + std::to_string(code));
  }
  if (length != destination.size()) {
    throw MalformedMessage("payload decodes to " + std::to_string(length) + " bytes, " +
                           std::to_string(destination.size()) + " announced");
  }
}

void require_size(const FrameHeader& header, std::size_t expected) {
  if (header.original_bytes != expected) {
    throw MalformedMessage("frame announces " + std::to_string(header.original_bytes) + " bytes, " +
                           std::to_string(expected) + " expected");
  }
}

}  // namespace

FrameHeader read_frame_header(std::span<const std::byte> frame, std::size_t max_original_bytes) {
  if (frame.size() < kFrameHeaderBytes) {
    throw MalformedMessage("frame of " + std::to_string(frame.size()) +
                           " bytes is shorter than its header");
  }
  return check_frame(frame.data(), frame.subspan(kFrameHeaderBytes), max_original_bytes);
}

std::span<const std::byte> raw_payload(std::span<const std::byte> frame) {
  const FrameHeader header = read_frame_header(frame);
  if (header.method != FrameMethod::raw) throw MalformedMessage("frame is compressed, not raw");
  return frame.subspan(kFrameHeaderBytes);
}

void decompress_frame(std::span<const std::byte> frame, std::span<std::byte> destination) {
  const FrameHeader header = read_frame_header(frame, destination.size());
  require_size(header, destination.size());
  const std::span<const std::byte> payload = frame.subspan(kFrameHeaderBytes);
  if (header.method == FrameMethod::raw) {
    if (!payload.empty()) std::memcpy(destination.data(), payload.data(), payload.size());
    return;
  }
  decode_payload(payload, destination);
}

std::array<std::byte, kFrameHeaderBytes> raw_frame_header(std::size_t payload_bytes) {
  std::array<std::byte, kFrameHeaderBytes> header;
  write_header(header.data(), FrameMethod::raw, payload_bytes, payload_bytes);
  return header;
}

FrameHeader decode_in_place(std::span<const std::byte> header, std::span<std::byte> region,
                            std::size_t payload_bytes, std::vector<std::byte>& scratch) {
  if (header.size() != kFrameHeaderBytes) {
    throw MalformedMessage("header of " + std::to_string(header.size()) + " bytes");
  }
  if (payload_bytes > region.size()) {
    throw MalformedMessage(std::to_string(payload_bytes) + " payload bytes received for " +
                           std::to_string(region.size()) + " expected");
  }
  const FrameHeader checked =
      check_frame(header.data(), region.first(payload_bytes), region.size());
  if (checked.method == FrameMethod::raw) return checked;
  // The payload occupies the start of the region it decodes into: move it
  // out first (it is the short, compressed form).
  scratch.assign(region.begin(), region.begin() + static_cast<std::ptrdiff_t>(payload_bytes));
  decode_payload(scratch, region.first(checked.original_bytes));
  return checked;
}

std::vector<std::byte> compress_words(std::span<const std::int64_t> words) {
  const std::span<const std::byte> bytes = std::as_bytes(words);
  std::vector<std::byte> frame(compress_capacity(bytes.size()));
  frame.resize(compress_frame(bytes, frame).frame_bytes);
  return frame;
}

std::vector<std::int64_t> decompress_words(std::span<const std::byte> frame,
                                           std::size_t max_words) {
  const std::size_t max_bytes =
      max_words > SIZE_MAX / sizeof(std::int64_t) ? SIZE_MAX : max_words * sizeof(std::int64_t);
  const FrameHeader header = read_frame_header(frame, max_bytes);
  if (header.original_bytes % sizeof(std::int64_t) != 0) {
    throw MalformedMessage(std::to_string(header.original_bytes) +
                           " bytes are not a whole number of metadata words");
  }
  std::vector<std::int64_t> words(header.original_bytes / sizeof(std::int64_t));
  decompress_frame(frame, std::as_writable_bytes(std::span(words)));
  return words;
}

CompressionSample sample_compression(std::span<const std::byte> message, std::size_t sample_bytes) {
  constexpr std::size_t kSlices = 4;
  const std::size_t total = std::min(sample_bytes, message.size());
  const std::size_t slices = total == message.size() ? 1 : kSlices;
  const std::size_t slice = total / slices;
  CompressionSample sample;
  if (slice == 0) return sample;
  thread_local std::vector<std::byte> compressed;
  thread_local std::vector<std::byte> restored;
  if (compressed.size() < lzo_bound(slice)) compressed.resize(lzo_bound(slice));
  if (restored.size() < slice) restored.resize(slice);
  for (std::size_t i = 0; i < slices; ++i) {
    // Slice i starts at the i-th of `slices` equal parts of the message,
    // so the sample sees its beginning, middle and end.
    const std::size_t offset = slices == 1 ? 0 : i * (message.size() - slice) / (slices - 1);
    const auto start = std::chrono::steady_clock::now();
    const std::size_t out = lzo_compress(message.subspan(offset, slice), compressed.data());
    sample.seconds += seconds_since(start);
    sample.bytes_in += static_cast<std::int64_t>(slice);
    sample.bytes_out += static_cast<std::int64_t>(std::min(out, slice));
    if (out >= slice) continue;  // would go raw: nothing to decompress
    // Decompression speed depends on the data too (long runs of zeros
    // decode slower than they encode), so the sample times it as well.
    const auto decode_start = std::chrono::steady_clock::now();
    lzo_uint length = slice;
    const int code =
        lzo1x_decompress_safe(reinterpret_cast<const unsigned char*>(compressed.data()), out,
                              reinterpret_cast<unsigned char*>(restored.data()), &length, nullptr);
    sample.decompress_seconds += seconds_since(decode_start);
    if (code != LZO_E_OK || length != slice) {
      throw UsageError(ErrorCode::unsupported,
                       "LZO1X cannot decode its own output (error " + std::to_string(code) + ")");
    }
    sample.bytes_decompressed += static_cast<std::int64_t>(slice);
  }
  return sample;
}

}  // namespace flowio::exchange
