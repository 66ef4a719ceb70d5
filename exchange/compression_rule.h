// The adaptive compression rule: whether to compress one message, per peer
// and per buffer iteration, from what this process has measured.
//
// Compressing pays when the bytes it keeps off the link take longer to
// send than compressing and decompressing them, and the pipeline hides
// most of the codec's time: while message k is on the wire, message k+1 is
// compressed and message k-1 decompressed. In steady state a pipelined
// stream moves at the pace of its slowest stage, so for a message of n
// bytes, a link of bandwidth B to the peer, compression speed C, ratio r
// (compressed/original bytes) and decompression speed D:
//   off:  n / B
//   on:   max(n/C, r n/B, n/D) + (n/C + r n/B + n/D - max(...)) / depth
// where `depth` is how many messages the stream holds (the first
// compression and the last decompression are not hidden: with depth 1
// nothing overlaps). The rule compresses when `on` is below `off` by a
// margin, so that measurement noise does not make it flip on data or links
// where compression barely pays.
//
// What it measures, and how cheaply:
// - B per peer, from the messages this process sends (record_transfer):
//   bytes over the time messages to that peer were in flight (overlapping
//   messages are counted once), decayed so that it follows the link.
// - r, C and D from a sample of the message at hand (sample_compression
//   in compress.h: at most a few KiB, compressed, decompressed and thrown
//   away), with C and D also learned from every real compression and
//   decompression (record_compression, record_decompression; the peers
//   that decompress run the same code on the same kind of machine).
// A message is sent raw without sampling when it is smaller than
// flowio_compress_min_bytes, when nothing is known of its link yet (it
// then measures it), or when the link is faster than compression and
// decompression could ever be (shared memory): so on fast links auto
// costs one clock reading per message.
//
// Thread safety: every member may be called from any thread at once (the
// compress nodes of several iterations and the progress thread, which
// reports transfers); a mutex guards the estimates, and the sampler passed
// to decide() runs outside it.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "exchange/compress.h"
#include "flowio/hints.h"
#include "flowio/statistics.h"

namespace flowio::exchange {

enum class CompressionMode { off, on, automatic };

// The hints that govern compression (api/include/flowio/hints.h):
//   flowio_compress            "auto" (default), "on" or "off".
//   flowio_compress_min_bytes  messages shorter than this go raw (default
//                              65536).
struct CompressionSettings {
  CompressionMode mode = CompressionMode::automatic;
  std::int64_t min_bytes = 65536;
  // Bytes of a message compressed to estimate its ratio and speed.
  std::int64_t sample_bytes = 16384;
  // Compress only when the model predicts at least this share of the
  // message's sending time saved.
  double margin = 0.1;

  // Throws UsageError(invalid_argument) for a malformed value.
  static CompressionSettings from_hints(const Hints& hints);
};

// "off", "on" or "auto", as the hint spells it.
const char* to_string(CompressionMode mode);

// Why a message was or was not compressed; each is counted in
// CompressionDecisions.
enum class CompressionReason {
  forced_on,        // flowio_compress=on
  saves_time,       // auto: the model predicts a saving
  forced_off,       // flowio_compress=off
  too_small,        // shorter than flowio_compress_min_bytes
  unmeasured_link,  // auto: nothing known yet of the link to this peer
  fast_link,        // auto: the link outruns the codec whatever the ratio
  no_saving,        // auto: the sample says compressing would not pay
};

struct CompressionDecision {
  bool compress = false;
  CompressionReason reason = CompressionReason::forced_off;
  std::optional<CompressionSample> sample;  // when one was taken
};

// Adds one decision to `counts` (not_shrinking is counted by the caller,
// which alone sees the result of compressing).
void count_decision(CompressionDecisions& counts, CompressionReason reason);

// The estimates the rule holds; a copy, for statistics and tests.
struct CompressionEstimates {
  std::optional<double> compress_bytes_per_second;
  std::optional<double> decompress_bytes_per_second;
  std::vector<std::optional<double>> link_bytes_per_second;  // by peer
};

class CompressionRule {
 public:
  // For a communicator of `peers` processes (peers are its ranks).
  CompressionRule(CompressionSettings settings, int peers);

  const CompressionSettings& settings() const { return settings_; }

  // Decides whether to compress a message of `bytes` bytes to `peer`,
  // one of a stream of `depth` messages (at least 1) this process sends
  // through the compress -> send pipeline at once. Calls `sample` at most
  // once, only in auto mode and only when the answer depends on it, and
  // learns the compression speed from what it returns.
  using Sampler = std::function<CompressionSample()>;
  CompressionDecision decide(int peer, std::int64_t bytes, std::int64_t depth,
                             const Sampler& sample);

  // A message of `wire_bytes` bytes to `peer` was in flight from `start`
  // to `end` (seconds of one monotonic clock; post to completion of the
  // send). Messages may be reported in any order and overlap; short ones
  // (below kMeasuredBytes) are ignored, since their time is latency, not
  // bandwidth.
  void record_transfer(int peer, std::int64_t wire_bytes, double start, double end);
  // A compression of `bytes_in` bytes took `seconds`.
  void record_compression(std::int64_t bytes_in, double seconds);
  // A decompression producing `bytes_out` bytes took `seconds`.
  void record_decompression(std::int64_t bytes_out, double seconds);

  CompressionEstimates estimates() const;

  // Messages shorter than this do not measure a link.
  static constexpr std::int64_t kMeasuredBytes = 32768;

 private:
  // A rate estimated from decayed sums of amounts and times: recent
  // observations weigh most, large ones more than small ones.
  struct Rate {
    double amount = 0;
    double seconds = 0;
    void add(double more_amount, double more_seconds);
    std::optional<double> per_second() const;
  };
  struct Link {
    Rate rate;
    double busy_until = 0;  // end of the latest transfer counted
  };

  CompressionSettings settings_;
  mutable std::mutex mutex_;
  Rate compression_;
  Rate decompression_;
  std::vector<Link> links_;
};

}  // namespace flowio::exchange
