#include "exchange/compress_stage.h"

#include <chrono>
#include <cstring>
#include <string>

namespace flowio::exchange {

namespace {

// The fields add_statistics sums, each listed once: a field added to
// CompressionStatistics or CompressionDecisions is summed by adding it here.
constexpr std::int64_t CompressionStatistics::*kByteCounts[] = {
    &CompressionStatistics::data_bytes_in,     &CompressionStatistics::data_bytes_out,
    &CompressionStatistics::metadata_bytes_in, &CompressionStatistics::metadata_bytes_out,
    &CompressionStatistics::received_bytes_in, &CompressionStatistics::received_bytes_out};
constexpr double CompressionStatistics::*kSeconds[] = {&CompressionStatistics::compress_seconds,
                                                       &CompressionStatistics::sample_seconds,
                                                       &CompressionStatistics::decompress_seconds};
constexpr std::int64_t CompressionDecisions::*kDecisionCounts[] = {
    &CompressionDecisions::compressed,      &CompressionDecisions::not_shrinking,
    &CompressionDecisions::forced_off,      &CompressionDecisions::too_small,
    &CompressionDecisions::unmeasured_link, &CompressionDecisions::fast_link,
    &CompressionDecisions::no_saving,       &CompressionDecisions::no_gain_observed,
    &CompressionDecisions::probes};

}  // namespace

void add_statistics(CompressionStatistics& into, const CompressionStatistics& from) {
  if (into.mode.empty()) into.mode = from.mode;
  for (const auto field : kByteCounts) into.*field += from.*field;
  for (const auto field : kSeconds) into.*field += from.*field;
  for (const auto field : kDecisionCounts) into.decisions.*field += from.decisions.*field;
}

double compress_stage_clock() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

CompressStage::Outgoing CompressStage::encode(int peer, std::span<const std::byte> message,
                                              std::vector<std::byte>& spare, std::int64_t depth,
                                              CompressionStatistics& statistics) {
  if (statistics.mode.empty()) statistics.mode = to_string(rule_.settings().mode);
  double sample_seconds = 0;
  const CompressionDecision decision =
      rule_.decide(peer, static_cast<std::int64_t>(message.size()), depth, stage_, [&] {
        const CompressionSample sample =
            sample_compression(message, static_cast<std::size_t>(rule_.settings().sample_bytes));
        sample_seconds = sample.seconds + sample.decompress_seconds;
        return sample;
      });
  statistics.sample_seconds += sample_seconds;
  statistics.compress_seconds += sample_seconds;
  count_decision(statistics.decisions, decision.reason);
  Outgoing outgoing;
  outgoing.header = raw_frame_header(message.size());
  outgoing.payload = message;
  outgoing.original_bytes = message.size();
  if (decision.compress) {
    if (spare.size() < compress_capacity(message.size())) {
      spare.resize(compress_capacity(message.size()));
    }
    const double start = compress_stage_clock();
    const EncodedFrame encoded = compress_frame(message, spare);
    const double seconds = compress_stage_clock() - start;
    statistics.compress_seconds += seconds;
    rule_.record_compression(static_cast<std::int64_t>(message.size()), seconds);
    if (encoded.compressed) {
      std::memcpy(outgoing.header.data(), spare.data(), kFrameHeaderBytes);
      outgoing.payload = std::span<const std::byte>(spare).subspan(
          kFrameHeaderBytes, encoded.frame_bytes - kFrameHeaderBytes);
      outgoing.compressed = true;
      compressed_bytes_ += static_cast<std::int64_t>(message.size());
    } else {
      // Sent raw from where it lies after all (compress_frame's raw copy
      // in `spare` is not needed).
      --statistics.decisions.compressed;
      ++statistics.decisions.not_shrinking;
    }
  }
  statistics.data_bytes_in += static_cast<std::int64_t>(message.size());
  statistics.data_bytes_out += static_cast<std::int64_t>(outgoing.frame_bytes());
  return outgoing;
}

void CompressStage::finish(double seconds, const CompressionStatistics& statistics) {
  rule_.record_stage(seconds, statistics.data_bytes_in + statistics.received_bytes_out,
                     statistics.data_bytes_in, compressed_bytes_.load());
}

void CompressStage::record_send(int peer, const Outgoing& sent, double posted, double completed) {
  SentMessage message;
  message.original_bytes = static_cast<std::int64_t>(sent.original_bytes);
  message.wire_bytes = static_cast<std::int64_t>(sent.frame_bytes());
  message.compressed = sent.compressed;
  message.posted = posted;
  message.completed = completed;
  rule_.record_send(peer, message);
}

std::size_t CompressStage::decode(std::span<const std::byte> header, std::span<std::byte> region,
                                  std::size_t payload_bytes, std::vector<std::byte>& scratch,
                                  CompressionStatistics& statistics) {
  const double start = compress_stage_clock();
  const FrameHeader checked = decode_in_place(header, region, payload_bytes, scratch);
  record_decoded(checked, checked.frame_bytes(), start, statistics);
  return checked.original_bytes;
}

std::vector<std::byte> CompressStage::encode_words(int peer, std::span<const std::int64_t> words,
                                                   std::int64_t depth,
                                                   CompressionStatistics& statistics) {
  const std::span<const std::byte> payload = std::as_bytes(words);
  std::vector<std::byte> spare;
  CompressionStatistics data;
  const Outgoing outgoing = encode(peer, payload, spare, depth, data);
  // Counted as metadata, not data.
  data.metadata_bytes_in = data.data_bytes_in;
  data.metadata_bytes_out = data.data_bytes_out;
  data.data_bytes_in = 0;
  data.data_bytes_out = 0;
  add_statistics(statistics, data);
  std::vector<std::byte> frame(outgoing.frame_bytes());
  std::memcpy(frame.data(), outgoing.header.data(), kFrameHeaderBytes);
  if (!outgoing.payload.empty()) {
    std::memcpy(frame.data() + kFrameHeaderBytes, outgoing.payload.data(), outgoing.payload.size());
  }
  return frame;
}

std::vector<std::int64_t> CompressStage::decode_words(std::span<const std::byte> frame,
                                                      std::size_t max_words,
                                                      CompressionStatistics& statistics) {
  const double start = compress_stage_clock();
  std::vector<std::int64_t> words = decompress_words(frame, max_words);
  record_decoded(read_frame_header(frame), frame.size(), start, statistics);
  return words;
}

void CompressStage::record_decoded(const FrameHeader& header, std::size_t frame_bytes, double start,
                                   CompressionStatistics& statistics) {
  statistics.received_bytes_in += static_cast<std::int64_t>(frame_bytes);
  statistics.received_bytes_out += static_cast<std::int64_t>(header.original_bytes);
  if (header.method == FrameMethod::lzo1x_1) {
    const double seconds = compress_stage_clock() - start;
    statistics.decompress_seconds += seconds;
    rule_.record_decompression(static_cast<std::int64_t>(header.original_bytes), seconds);
  }
}

}  // namespace flowio::exchange
