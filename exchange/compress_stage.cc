#include "exchange/compress_stage.h"

#include <chrono>
#include <cstring>
#include <string>

namespace flowio::exchange {

void add_statistics(CompressionStatistics& into, const CompressionStatistics& from) {
  if (into.mode.empty()) into.mode = from.mode;
  into.data_bytes_in += from.data_bytes_in;
  into.data_bytes_out += from.data_bytes_out;
  into.metadata_bytes_in += from.metadata_bytes_in;
  into.metadata_bytes_out += from.metadata_bytes_out;
  into.received_bytes_in += from.received_bytes_in;
  into.received_bytes_out += from.received_bytes_out;
  into.compress_seconds += from.compress_seconds;
  into.sample_seconds += from.sample_seconds;
  into.decompress_seconds += from.decompress_seconds;
  CompressionDecisions& to = into.decisions;
  const CompressionDecisions& add = from.decisions;
  to.compressed += add.compressed;
  to.not_shrinking += add.not_shrinking;
  to.forced_off += add.forced_off;
  to.too_small += add.too_small;
  to.unmeasured_link += add.unmeasured_link;
  to.fast_link += add.fast_link;
  to.no_saving += add.no_saving;
}

double compress_stage_clock() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::span<const std::byte> CompressStage::frame(int peer, std::span<std::byte> staging,
                                                std::span<const std::byte> payload,
                                                std::span<std::byte> spare, std::int64_t depth,
                                                CompressionStatistics& statistics) {
  if (statistics.mode.empty()) statistics.mode = to_string(rule_.settings().mode);
  double sample_seconds = 0;
  const CompressionDecision decision =
      rule_.decide(peer, static_cast<std::int64_t>(payload.size()), depth, [&] {
        const CompressionSample sample =
            sample_compression(payload, static_cast<std::size_t>(rule_.settings().sample_bytes));
        sample_seconds = sample.seconds + sample.decompress_seconds;
        return sample;
      });
  statistics.sample_seconds += sample_seconds;
  statistics.compress_seconds += sample_seconds;
  count_decision(statistics.decisions, decision.reason);
  if (!decision.compress) return staging.first(seal_raw_frame(staging, payload.size()));
  const double start = compress_stage_clock();
  const EncodedFrame encoded = compress_frame(payload, spare);
  const double seconds = compress_stage_clock() - start;
  statistics.compress_seconds += seconds;
  rule_.record_compression(static_cast<std::int64_t>(payload.size()), seconds);
  if (!encoded.compressed) {
    // compress_frame copied the payload raw into `spare`; the staging
    // buffer holds the same bytes, so seal that and leave `spare` alone.
    --statistics.decisions.compressed;
    ++statistics.decisions.not_shrinking;
    return staging.first(seal_raw_frame(staging, payload.size()));
  }
  return spare.first(encoded.frame_bytes);
}

std::span<const std::byte> CompressStage::encode(int peer, std::span<std::byte> staging,
                                                 std::size_t bytes, std::span<std::byte> spare,
                                                 std::int64_t depth,
                                                 CompressionStatistics& statistics) {
  if (staging.size() < frame_bound(bytes) || spare.size() < compress_capacity(bytes)) {
    throw UsageError(ErrorCode::invalid_argument,
                     "compress stage: buffers of " + std::to_string(staging.size()) + " and " +
                         std::to_string(spare.size()) + " bytes for a message of " +
                         std::to_string(bytes));
  }
  const std::span<const std::byte> sent =
      frame(peer, staging, staging.subspan(kFrameHeaderBytes, bytes), spare, depth, statistics);
  statistics.data_bytes_in += static_cast<std::int64_t>(bytes);
  statistics.data_bytes_out += static_cast<std::int64_t>(sent.size());
  return sent;
}

std::span<const std::byte> CompressStage::decode(std::span<const std::byte> frame,
                                                 std::size_t expected_bytes,
                                                 std::vector<std::byte>& scratch,
                                                 CompressionStatistics& statistics) {
  const FrameHeader header = read_frame_header(frame, expected_bytes);
  if (header.original_bytes != expected_bytes) {
    throw MalformedMessage("frame holds " + std::to_string(header.original_bytes) + " bytes, " +
                           std::to_string(expected_bytes) + " expected");
  }
  statistics.received_bytes_in += static_cast<std::int64_t>(frame.size());
  statistics.received_bytes_out += static_cast<std::int64_t>(expected_bytes);
  if (header.method == FrameMethod::raw) return frame.subspan(kFrameHeaderBytes);
  scratch.resize(expected_bytes);
  const double start = compress_stage_clock();
  decompress_frame(frame, scratch);
  const double seconds = compress_stage_clock() - start;
  statistics.decompress_seconds += seconds;
  rule_.record_decompression(static_cast<std::int64_t>(expected_bytes), seconds);
  return scratch;
}

std::vector<std::byte> CompressStage::encode_words(int peer, std::span<const std::int64_t> words,
                                                   std::int64_t depth,
                                                   CompressionStatistics& statistics) {
  const std::span<const std::byte> payload = std::as_bytes(words);
  std::vector<std::byte> staging(frame_bound(payload.size()));
  if (!payload.empty()) {
    std::memcpy(staging.data() + kFrameHeaderBytes, payload.data(), payload.size());
  }
  std::vector<std::byte> spare(compress_capacity(payload.size()));
  const std::span<const std::byte> sent =
      frame(peer, staging, std::span<const std::byte>(staging).subspan(kFrameHeaderBytes), spare,
            depth, statistics);
  statistics.metadata_bytes_in += static_cast<std::int64_t>(payload.size());
  statistics.metadata_bytes_out += static_cast<std::int64_t>(sent.size());
  return {sent.begin(), sent.end()};
}

std::vector<std::int64_t> CompressStage::decode_words(std::span<const std::byte> frame,
                                                      std::size_t max_words,
                                                      CompressionStatistics& statistics) {
  const double start = compress_stage_clock();
  std::vector<std::int64_t> words = decompress_words(frame, max_words);
  const FrameHeader header = read_frame_header(frame);
  if (header.method == FrameMethod::lzo1x_1) {
    const double seconds = compress_stage_clock() - start;
    statistics.decompress_seconds += seconds;
    rule_.record_decompression(static_cast<std::int64_t>(header.original_bytes), seconds);
  }
  statistics.received_bytes_in += static_cast<std::int64_t>(frame.size());
  statistics.received_bytes_out += static_cast<std::int64_t>(header.original_bytes);
  return words;
}

}  // namespace flowio::exchange
