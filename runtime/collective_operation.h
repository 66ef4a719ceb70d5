// CollectiveOperation: one process's part of one collective call, from
// the call to the completion of its future: the request, what the
// processes told each other, the plan it runs, and the state of its buffer
// iterations while they run. The stages (collective_stages.h) read and
// write it as the graph moves the operation along; each field below is
// written by one stage and read by the stages after it, which the graph's
// edges order.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "exchange/compress.h"
#include "exchange/compress_stage.h"
#include "exchange/compression_rule.h"
#include "exchange/metadata_exchange.h"
#include "flowio/future.h"
#include "flowio/statistics.h"
#include "runtime/announcement_exchange.h"
#include "runtime/byte_buffer.h"
#include "runtime/collective_plan.h"
#include "runtime/collective_request.h"
#include "runtime/core/realm_policy.h"
#include "runtime/direct_call.h"
#include "runtime/operation_recorder.h"
#include "runtime/outcome_agreement.h"
#include "runtime/plan_check.h"
#include "runtime/recycled_buffers.h"
#include "sync/lock.h"

namespace flowio::runtime {

class CollectiveContext;
class Executor;
class GraphRunner;

// A frame header's room, for a framed message (exchange/compress_stage.h).
using FrameHeaderBytes = std::array<std::byte, exchange::kFrameHeaderBytes>;

// A client message in flight.
struct ClientRun {
  ByteBuffer staging;  // when memory is not contiguous
  // Data representation hook (issue 16): the item's bytes in the file's
  // representation, written by the convert stage (a recycled buffer).
  RecycledBuffers::Lease converted;
  char* data = nullptr;
  std::int64_t received = 0;  // reads: bytes that lay before end of file
  std::int64_t posted_ns = 0;
  // Framed messages: what a write sends, and where a compressed frame is
  // built; the header a read receives and the payload bytes that came.
  exchange::CompressStage::Outgoing outgoing;
  std::vector<std::byte> spare;
  FrameHeaderBytes header{};
  std::int64_t payload_bytes = 0;
  std::vector<std::byte> scratch;
  CompressionStatistics compression;
  // A write's message went empty: this process had failed (its aggregator
  // then leaves the window unwritten).
  bool sent_empty = false;
};

// A window in flight on its aggregator.
struct WindowRun {
  ByteBuffer buffer;
  std::vector<std::int64_t> before_end;  // reads: bytes of each part before end of file
  std::int64_t posted_ns = 0;
  // Framed messages, one per part: what a read sends (and where its
  // compressed frames are built); the headers a write receives and the
  // payload bytes that came.
  std::vector<exchange::CompressStage::Outgoing> outgoing;
  std::vector<std::vector<std::byte>> spares;
  std::vector<FrameHeaderBytes> headers;
  std::vector<std::int64_t> payload_bytes;
  std::vector<std::byte> scratch;
  CompressionStatistics compression;
  // A write's part came empty: its client had failed, so the window is
  // not written (the operation fails everywhere through the agreement).
  bool client_failed = false;
};

// An Alltoallw round in flight.
struct RoundRun {
  ByteBuffer client_data;  // this process's shares, one after another
  std::int64_t posted_ns = 0;
  // Counts and displacements of nothing, one per process: the round of a
  // process whose buffers could not be made.
  std::vector<int> nothing;
};

class CollectiveOperation {
 public:
  CollectiveOperation(CollectiveContext& context, CollectiveRequest request,
                      std::function<void()> on_done);
  // With the sequence number the call already took (a call that began
  // without an operation, run_settled).
  CollectiveOperation(CollectiveContext& context, CollectiveRequest request,
                      std::function<void()> on_done, std::uint64_t sequence);
  CollectiveOperation(const CollectiveOperation&) = delete;
  CollectiveOperation& operator=(const CollectiveOperation&) = delete;

  // Starts the operation on the caller's thread and returns its future; the
  // operation keeps itself alive until it completes. Blocking calls alone
  // on their file run to completion here (inline).
  static Future<std::size_t> start(CollectiveContext& context, CollectiveRequest request,
                                   std::function<void()> on_done);
  // A blocking call (request.blocking): runs it to completion, inline when
  // it is alone on its file, and returns what start()'s future would hold,
  // its failure in `failure`, without making a future. Throws, as start()
  // does, only what stops the operation from starting (`on_done` does not
  // run then).
  static std::size_t run(CollectiveContext& context, CollectiveRequest&& request,
                         std::function<void()>&& on_done, std::exception_ptr& failure);

  // A failure of this process's part, in `stage` (a name such as "pack",
  // or null when no stage applies); the first one is kept and reported at
  // the agreement with its stage. Thread safe.
  void fail(std::exception_ptr failure, const char* stage = nullptr);
  std::exception_ptr failure() const;
  // The stage of the first failure, or null.
  const char* failed_stage() const;
  // Runs `body`, keeping what it throws as the operation's failure (in
  // `stage`), so that every process goes through the whole protocol and
  // none waits forever.
  template <typename Body>
  void guarded(Body&& body, const char* stage = nullptr) {
    try {
      body();
    } catch (...) {
      fail(std::current_exception(), stage);
    }
  }

  // One buffer iteration (item, window or round) is done; the last one
  // takes the operation to the agreement. Thread safe.
  void item_done();
  // Adds an item's compression statistics to the operation's. Thread safe.
  void add_compression(const CompressionStatistics& statistics);
  // The end: statistics, the future, the next operations. Called once.
  void complete();

  CollectiveContext& context;
  const CollectiveRequest request;
  const std::uint64_t sequence;  // in message tags
  // At the call-order gate and the data-phase scheduler, which only the
  // operations that reach them are numbered for (has_phase_sequence).
  std::uint64_t phase_sequence = 0;
  OperationRecorder recorder;
  Executor* executor = nullptr;  // set at start, with runner
  GraphRunner* runner = nullptr;
  std::int64_t started_ns = 0;

  // Offsets: every process's announcement (this process's at rank()).
  std::vector<Announcement> announcements;
  std::vector<core::AccessSummary> summaries;
  std::vector<std::int64_t> view_words;  // this access described by its view
  AnnouncementExchange exchange;
  // Every process did its part before the gather and none failed: the
  // gather was the whole protocol. Such an operation has no control or
  // data phase; it passes the call-order gate and the scheduler at once.
  bool told_by_gather = false;
  // The gather showed a failure every process sees alike (bad arguments,
  // mismatched calls, the gather itself): no process takes part in a data
  // phase.
  bool failed_at_gather = false;

  // Realms and metadata: the plan, compiled here or kept from an earlier
  // call with the same accesses.
  std::shared_ptr<CollectivePlan> plan;
  bool plan_reused = false;
  // The plan is compiled for this call (two-phase I/O, no kept plan):
  // decided alike on every process, which then all take part in the plan
  // check, whatever failed.
  bool compiling = false;
  exchange::MetadataExchange metadata;
  bool metadata_posted = false;  // this process's descriptions and receives
  // The plan check (plan_check.h) showed that some process could not make
  // its part: no process takes part in a data phase.
  bool failed_at_plan_check = false;
  PlanCheck plan_check;

  // Atomic mode (request.atomic): the lease the data phase waits for
  // (asked at the plan, or by the direct stage), then holds until this
  // process's direct access is done or the outcome is agreed.
  Future<sync::Lease> atomic_pending;
  sync::Lease atomic_lease;

  // Data.
  bool accessed_directly = false;  // this process moved its own data
  std::optional<std::int64_t> bytes_read_directly;
  std::vector<ClientRun> client_runs;
  std::vector<WindowRun> window_runs;
  std::vector<RoundRun> round_runs;
  std::atomic<std::size_t> remaining{0};
  std::int64_t data_phase_ns = 0;  // when the data phase started
  // Compression not off: the file's rule as this operation began, and
  // this operation's stage of it (one stage per operation, finished when
  // its last item is done), which frames its metadata messages, and its
  // data messages when they go point to point (`framed`).
  std::shared_ptr<exchange::CompressionRule> compression_rule;
  std::optional<exchange::CompressStage> compression;
  bool framed = false;
  std::int64_t messages_sent = 0;              // framed data messages this process sends
  CompressionStatistics metadata_compression;  // the metadata stage's

  // Agreement.
  OutcomeAgreement agreement;
  std::int64_t agree_begin_ns = 0;
  std::exception_ptr outcome;

 private:
  // The offsets stage, on the caller's thread: the summary, the early
  // direct access where it applies, the announcements posted. Returns the
  // operation, which keeps itself alive until it completes.
  static std::shared_ptr<CollectiveOperation> begin(CollectiveContext& context,
                                                    CollectiveRequest request,
                                                    std::function<void()> on_done);
  // A blocking call alone on a one-process file whose part goes direct:
  // the collective call is its independent call, made here without an
  // operation (no announcement, no turn at the gate or the scheduler), and
  // recorded as an operation settled at its gather would be. Empty when
  // the call is not such a call (nothing was done then).
  static std::optional<std::size_t> run_alone(CollectiveContext& context,
                                              const CollectiveRequest& request,
                                              std::exception_ptr& failure);
  // A blocking call alone on a file of a few processes (point-to-point
  // announcements) whose part goes direct: this process moves its part
  // and sends its announcement, as begin() does, but without an
  // operation. If every process did its part early without failing (what
  // the announcements tell), the call is settled here, recorded as an
  // operation settled at its gather would be, and `on_done` runs; else an
  // operation is made from what was done and continues from its gather
  // (resume_at_gather): the agreement, or the data phase for those that
  // did not go direct. Empty when the call is not such a call (nothing was
  // done then, `request` and `on_done` are untouched).
  static std::optional<std::size_t> run_settled(CollectiveContext& context,
                                                CollectiveRequest& request,
                                                std::function<void()>& on_done,
                                                std::exception_ptr& failure);
  // What run_settled did before it found the call not settled.
  struct SettledAttempt {
    std::uint64_t sequence;
    std::int64_t started_ns;
    std::int64_t gathered_ns;  // when the announcements were in
    int code;                  // of their exchange
    std::vector<Announcement> announcements;
    EarlyAccess early;
  };
  static std::size_t resume_at_gather(CollectiveContext& context, CollectiveRequest&& request,
                                      std::function<void()>&& on_done, SettledAttempt&& attempt,
                                      std::exception_ptr& failure);
  // An inline operation: waits for the announcements, then runs the
  // stages on this thread until the operation is complete.
  void run_inline();
  // The gather completed: everyone's announcements are in.
  void gathered(int code);

  // Numbers the operation at the gate and the scheduler: at begin() when
  // it runs in the background, after its gather when inline (nothing else
  // outstanding then, so call order holds), never when settled there.
  void take_phase_sequence();

  bool inline_ = false;  // run on the caller's thread (begin() decides)
  bool has_phase_sequence_ = false;
  bool* completed_ = nullptr;  // inline: set by complete()
  std::span<MPI_Request> gather_requests_;
  // Where complete() leaves the result: the promise of start(), or, for
  // run(), the two fields after it.
  std::optional<Promise<std::size_t>> promise_;
  std::size_t moved_ = 0;
  std::exception_ptr result_;
  std::function<void()> on_done_;
  std::shared_ptr<CollectiveOperation> self_;  // alive until complete()
  mutable std::mutex mutex_;                   // failure_, failed_stage_, compression_statistics_
  std::exception_ptr failure_;
  const char* failed_stage_ = nullptr;
  std::atomic<bool> failed_{false};            // failure_ is set
  std::atomic<bool> compression_used_{false};  // add_compression was called
  CompressionStatistics compression_statistics_;
};

}  // namespace flowio::runtime
