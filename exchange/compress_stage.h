// The bodies of the compress and decompress stages of a collective
// operation: what runs between pack and send on a client, and between
// receive and unpack on an aggregator (and the other way round for reads),
// one call per message. They consult the file's CompressionRule, build or
// check the frame (compress.h), feed the rule what they measure and count
// everything in CompressionStatistics.
//
// Memory: a packer writes a message's payload behind kFrameHeaderBytes of
// room in its staging buffer. A message that goes raw is sealed there, in
// place, and sent from the staging buffer (no copy); one that is
// compressed goes into a second buffer of compress_capacity(bytes). On
// the receiving side a raw frame is unpacked from the receive buffer
// itself; a compressed one is decoded into a scratch buffer first.
//
// Thread safety: a CompressStage may be used from several threads at once
// (the rule is thread-safe); each call writes only the statistics object
// it is given, so concurrent calls need separate ones (merge them with
// add_statistics).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "exchange/compress.h"
#include "exchange/compression_rule.h"
#include "flowio/statistics.h"

namespace flowio::exchange {

// Adds every count and time of `from` to `into` (mode: `into`'s, or
// `from`'s when `into` has none).
void add_statistics(CompressionStatistics& into, const CompressionStatistics& from);

// Seconds of a monotonic clock, for the send times record_send takes.
double compress_stage_clock();

class CompressStage {
 public:
  // Borrows `rule` (the file's) for the stage's life.
  explicit CompressStage(CompressionRule& rule) : rule_(rule) {}

  // Frames the message of `bytes` bytes packed at
  // staging[kFrameHeaderBytes...] for `peer`, one of `depth` messages this
  // process sends in the operation's stream. Returns the frame to send:
  // the start of `staging` (raw, sealed in place) or of `spare`
  // (compressed). `staging` must hold frame_bound(bytes) bytes and `spare`
  // compress_capacity(bytes) (UsageError(invalid_argument) otherwise).
  std::span<const std::byte> encode(int peer, std::span<std::byte> staging, std::size_t bytes,
                                    std::span<std::byte> spare, std::int64_t depth,
                                    CompressionStatistics& statistics);

  // A frame of `frame_bytes` sent to `peer` was posted at `posted` and
  // completed at `completed` (compress_stage_clock() seconds).
  void record_send(int peer, std::size_t frame_bytes, double posted, double completed) {
    rule_.record_transfer(peer, static_cast<std::int64_t>(frame_bytes), posted, completed);
  }

  // The payload of a received frame (exactly the bytes received) that
  // must hold `expected_bytes`: in place for a raw frame, else decoded
  // into `scratch` (resized). Throws MalformedMessage for a frame that is
  // malformed or holds another length.
  std::span<const std::byte> decode(std::span<const std::byte> frame, std::size_t expected_bytes,
                                    std::vector<std::byte>& scratch,
                                    CompressionStatistics& statistics);

  // Metadata: a frame of `words` for `peer`, compressed when the rule
  // says so (one of `depth` metadata messages), and the words of a
  // received one (at most `max_words`; MalformedMessage otherwise).
  std::vector<std::byte> encode_words(int peer, std::span<const std::int64_t> words,
                                      std::int64_t depth, CompressionStatistics& statistics);
  std::vector<std::int64_t> decode_words(std::span<const std::byte> frame, std::size_t max_words,
                                         CompressionStatistics& statistics);

 private:
  // Decides for `payload` and writes the frame: in place behind the
  // header of `staging`, or compressed into `spare`.
  std::span<const std::byte> frame(int peer, std::span<std::byte> staging,
                                   std::span<const std::byte> payload, std::span<std::byte> spare,
                                   std::int64_t depth, CompressionStatistics& statistics);

  CompressionRule& rule_;
};

}  // namespace flowio::exchange
