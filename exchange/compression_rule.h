// The adaptive compression rule: whether to compress one message, per peer
// and per buffer iteration, from what this process has measured.
//
// A model decides each message. Compressing pays when the bytes it keeps
// off the link take longer to send than compressing and decompressing
// them, and the pipeline hides most of the codec's time: while message k
// is on the wire, message k+1 is compressed and message k-1 decompressed.
// In steady state a pipelined stream moves at the pace of its slowest
// stage, so for a message of n bytes, a link of bandwidth B to the peer,
// compression speed C, ratio r (compressed/original bytes) and
// decompression speed D:
//   off:  n / B
//   on:   max(n/C, r n/B, n/D) + (n/C + r n/B + n/D - max(...)) / depth
// where `depth` is how many messages the stream holds (the first
// compression and the last decompression are not hidden: with depth 1
// nothing overlaps). The model says compress when `on` is below `off` by
// a margin, so that measurement noise does not make it flip on data or
// links where compression barely pays.
//
// What happened checks the model. The model takes the link and the codec
// to be separate resources; on shared memory with the cores oversubscribed
// they are not (a transfer is a copy on the same cores, and its time is
// mostly waiting to be scheduled, which smaller messages do not shorten),
// so a link seen through a busy node looks slower than it is. So the
// caller also reports each exchange stage as a whole (record_stage: its
// time, the bytes it moved, how many went compressed), and the rule
// compares the time per byte of stages that went mostly compressed with
// that of stages that went raw. If compressing made stages slower (by
// more than kStageTolerance), it stops compressing (no_gain_observed) and
// tries the model's choice again every kStageProbeInterval stages; while
// it compresses, every kStageProbeInterval-th stage goes raw, to keep the
// comparison current.
// The first stage goes raw: it measures the links and the raw time.
//
// What it measures, and how cheaply:
// - B per peer, from the raw messages this process sends (record_send):
//   bytes over the time messages to that peer were in flight (overlapping
//   messages are counted once), decayed so that it follows the link.
//   Compressed messages are short, so their time is mostly latency (or
//   none at all: MPI sends short messages eagerly) and would mislead. To
//   keep B current while compressing, every kProbeInterval-th message to
//   a peer goes raw.
// - r, C and D from a sample of the message at hand (sample_compression
//   in compress.h: at most a few KiB, compressed, decompressed and thrown
//   away), with C and D also learned from every real compression and
//   decompression (record_compression, record_decompression; the peers
//   that decompress run the same code on the same kind of machine).
// A message is sent raw without sampling when it is smaller than
// flowio_compress_min_bytes, when nothing is known of its link yet (it
// then measures it), when the stage is a raw one, or when the link is
// faster than compression and decompression could ever be (shared memory
// on an idle node): so on fast links auto costs one clock reading per
// message.
//
// Thread safety: every member may be called from any thread at once (the
// compress nodes of several iterations and the progress thread, which
// reports sends); a mutex guards the estimates, and the sampler passed to
// decide() runs outside it.
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
  bool operator==(const CompressionSettings&) const = default;
};

// "off", "on" or "auto", as the hint spells it.
const char* to_string(CompressionMode mode);

// Why a message was or was not compressed; each is counted in
// CompressionDecisions.
enum class CompressionReason {
  forced_on,         // flowio_compress=on
  saves_time,        // auto: the model predicts a saving
  probe_compressed,  // auto: the model's choice, tried again after stages
                     // that showed no gain
  forced_off,        // flowio_compress=off
  too_small,         // shorter than flowio_compress_min_bytes
  unmeasured_link,   // auto: nothing known yet of the link to this peer
  probe_raw,         // auto: raw, to measure the link or a raw stage again
  fast_link,         // auto: the link outruns the codec whatever the ratio
  no_saving,         // auto: the sample says compressing would not pay
  no_gain_observed,  // auto: stages that went compressed were slower
};

struct CompressionDecision {
  bool compress = false;
  CompressionReason reason = CompressionReason::forced_off;
  std::optional<CompressionSample> sample;  // when one was taken
};

// Adds one decision to `counts` (not_shrinking is counted by the caller,
// which alone sees the result of compressing).
void count_decision(CompressionDecisions& counts, CompressionReason reason);

// One message this process sent, as the rule learns from it.
struct SentMessage {
  std::int64_t original_bytes = 0;  // before compression
  std::int64_t wire_bytes = 0;      // the frame sent
  bool compressed = false;
  double posted = 0;     // when the send was posted (seconds, monotonic)
  double completed = 0;  // when it completed
};

// The estimates the rule holds; a copy, for statistics and tests.
struct CompressionEstimates {
  std::optional<double> compress_bytes_per_second;
  std::optional<double> decompress_bytes_per_second;
  std::vector<std::optional<double>> link_bytes_per_second;  // by peer
  // Bytes per second of stages that went raw and that went compressed.
  std::optional<double> raw_stage_bytes_per_second;
  std::optional<double> compressed_stage_bytes_per_second;
};

class CompressionRule {
 public:
  // For a communicator of `peers` processes (peers are its ranks).
  // `shares_memory[peer]`: messages to that peer are memory copies (same
  // node, shared-memory transport), never worth compressing in auto mode
  // (empty: no peer does).
  CompressionRule(CompressionSettings settings, int peers, std::vector<bool> shares_memory = {});

  const CompressionSettings& settings() const { return settings_; }

  // Decides whether to compress a message of `bytes` bytes to `peer`,
  // one of a stream of `depth` messages (at least 1) this process sends
  // through the compress -> send pipeline at once. Calls `sample` at most
  // once, only in auto mode and only when the answer depends on it, and
  // learns the codec's speeds from what it returns.
  // The message belongs to `stage` (begin_stage's answer).
  using Sampler = std::function<CompressionSample()>;
  struct Stage;
  CompressionDecision decide(int peer, std::int64_t bytes, std::int64_t depth, const Stage& stage,
                             const Sampler& sample);

  // What a stage does, fixed when it begins: stages may overlap (buffer
  // iterations in flight at once), each deciding by its own plan.
  enum class StagePlan { raw, model, vetoed };
  struct Stage {
    StagePlan plan = StagePlan::model;
    bool probe = false;  // goes the other way than the observations say
    bool first = false;  // nothing measured yet: raw, to measure
  };
  // Begins an exchange stage: one buffer iteration's exchange, or one
  // operation's, whichever the caller times as a whole.
  Stage begin_stage();

  // A message to `peer` was sent. Messages may be reported in any order
  // and overlap; only raw ones of at least kMeasuredBytes measure the link.
  void record_send(int peer, const SentMessage& message);
  // A compression of `bytes_in` bytes took `seconds`.
  void record_compression(std::int64_t bytes_in, double seconds);
  // A decompression producing `bytes_out` bytes took `seconds`.
  void record_decompression(std::int64_t bytes_out, double seconds);
  // A stage ended on this process: it took `seconds` and moved `bytes`
  // original bytes (sent and received); of the `sent_bytes` it sent,
  // `compressed_bytes` went compressed. It counts as a compressed stage
  // when at least half of what it sent went compressed. Stages that moved
  // nothing are ignored.
  void record_stage(double seconds, std::int64_t bytes, std::int64_t sent_bytes,
                    std::int64_t compressed_bytes);

  CompressionEstimates estimates() const;

  // Messages shorter than this do not measure a link.
  static constexpr std::int64_t kMeasuredBytes = 32768;
  // While compressing to a peer, every this many messages to it one goes
  // raw, to measure the link again.
  static constexpr int kProbeInterval = 16;
  // Every this many stages, one goes the other way than the observations
  // say (raw while compressing pays, the model's choice while it does not).
  static constexpr int kStageProbeInterval = 32;
  // Compressed stages must be this much slower than raw ones (per byte)
  // to stop compression: stage times are noisy, and a loss below it stays
  // within what auto promises (5% of off).
  static constexpr double kStageTolerance = 0.05;

 private:
  std::vector<bool> shares_memory_;
  // A rate estimated from decayed sums of amounts and times: recent
  // observations weigh most, large ones more than small ones.
  struct Rate {
    double amount = 0;
    double seconds = 0;
    void add(double more_amount, double more_seconds);
    std::optional<double> per_second() const;
  };
  struct Link {
    Rate wire;                 // raw messages: frame bytes over time in flight
    double busy_until = 0;     // end of the latest raw transfer counted
    bool compressing = false;  // the last decision compressed
    int since_raw = 0;         // decisions since the last raw message
  };
  CompressionDecision record(Link& link, CompressionDecision decision);

  CompressionSettings settings_;
  mutable std::mutex mutex_;
  Rate compression_;
  Rate decompression_;
  std::vector<Link> links_;
  Rate raw_stages_;                  // bytes over seconds of raw stages
  Rate compressed_stages_;           // and of compressed ones
  int stages_since_raw_ = 0;         // stages since the last raw one
  int stages_since_compressed_ = 0;  // stages since the last compressed one
};

}  // namespace flowio::exchange
