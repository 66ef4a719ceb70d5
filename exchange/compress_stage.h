// The bodies of the compress and decompress stages of a collective
// operation: what runs between pack and send on a client, and between
// receive and unpack on an aggregator (and the other way round for reads),
// one call per message. They consult the file's CompressionRule, build or
// check the frame (compress.h), feed the rule what they measure and count
// everything in CompressionStatistics.
//
// Memory and copies: a message goes raw straight from where it lies (the
// user's buffer, or the pack's staging buffer) behind a separate header,
// and is received with its header put aside and its payload straight
// where the data belong, so that a raw message costs no copy on either
// side: send and receive each with a two-block datatype (header, payload).
// A compressed frame is written into a spare buffer of
// compress_capacity(bytes), taken only for messages that are compressed,
// and sent from there (its header and payload are contiguous there); the
// receiver moves the short compressed payload out of the place it landed
// in and decodes it into that place.
// Both sides must agree that messages are framed at all: compression
// "off" on every process means no frames (flowio_compress must have the
// same value everywhere, as cb_buffer_size must).
//
// Thread safety: a CompressStage may be used from several threads at once
// (the rule is thread-safe); each call writes only the statistics object
// it is given, so concurrent calls need separate ones (merge them with
// add_statistics). finish() comes after every other call.
#pragma once

#include <array>
#include <atomic>
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

// One exchange stage's compress and decompress bodies (a buffer
// iteration's exchange, or an operation's: whatever the caller times as a
// whole), deciding by the plan the rule gave the stage when it began.
class CompressStage {
 public:
  // Begins a stage of `rule` (the file's), borrowed for the stage's life.
  explicit CompressStage(CompressionRule& rule) : rule_(rule), stage_(rule.begin_stage()) {}

  // Ends the stage: it took `seconds`, and `statistics` holds everything
  // its encode and decode calls counted (merged). The rule compares
  // stages that went compressed with stages that went raw.
  void finish(double seconds, const CompressionStatistics& statistics);

  // What a sender sends for one message: `header`, then `payload` (the
  // message where it lies when it goes raw, the compressed payload in
  // the spare buffer otherwise).
  struct Outgoing {
    std::array<std::byte, kFrameHeaderBytes> header{};
    std::span<const std::byte> payload;
    bool compressed = false;
    std::size_t original_bytes = 0;
    std::size_t frame_bytes() const { return header.size() + payload.size(); }
  };

  // Frames `message` for `peer`, one of `depth` messages this process
  // sends in the operation's stream. When it compresses, it sizes `spare`
  // (compress_capacity(message.size()) bytes) and writes the frame there;
  // a raw message leaves `spare` as it was, so memory for frames is taken
  // only by messages that are compressed. The Outgoing borrows `message`
  // or `spare` until the send completes.
  Outgoing encode(int peer, std::span<const std::byte> message, std::vector<std::byte>& spare,
                  std::int64_t depth, CompressionStatistics& statistics);

  // `sent` (what encode returned) to `peer` was posted at `posted` and
  // completed at `completed` (compress_stage_clock() seconds): the rule
  // learns from it. Called on whichever thread sees the completion.
  void record_send(int peer, const Outgoing& sent, double posted, double completed);

  // A frame received as `header` plus the payload in the first
  // `payload_bytes` of `region`, where the message belongs (at most
  // region.size() bytes of it): leaves the message at the start of
  // `region` (decoded through `scratch` if it was compressed) and returns
  // its length. Throws MalformedMessage (decode_in_place in compress.h).
  std::size_t decode(std::span<const std::byte> header, std::span<std::byte> region,
                     std::size_t payload_bytes, std::vector<std::byte>& scratch,
                     CompressionStatistics& statistics);

  // Metadata: a frame of `words` for `peer`, compressed when the rule
  // says so (one of `depth` metadata messages), and the words of a
  // received one (at most `max_words`; MalformedMessage otherwise).
  std::vector<std::byte> encode_words(int peer, std::span<const std::int64_t> words,
                                      std::int64_t depth, CompressionStatistics& statistics);
  std::vector<std::int64_t> decode_words(std::span<const std::byte> frame, std::size_t max_words,
                                         CompressionStatistics& statistics);

 private:
  // Counts a received frame of `frame_bytes` whose header is `header`,
  // decoded since `start` (compress_stage_clock()); the time of an LZO
  // frame's decoding goes to the rule as well (a raw one costs none).
  void record_decoded(const FrameHeader& header, std::size_t frame_bytes, double start,
                      CompressionStatistics& statistics);

  CompressionRule& rule_;
  const CompressionRule::Stage stage_;
  // Original bytes this stage sent compressed (encode may run on several
  // threads at once).
  std::atomic<std::int64_t> compressed_bytes_{0};
};

}  // namespace flowio::exchange
