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
#include <vector>

#include "exchange/compress.h"
#include "exchange/compress_stage.h"
#include "exchange/compression_rule.h"
#include "exchange/metadata_exchange.h"
#include "flowio/future.h"
#include "runtime/byte_buffer.h"
#include "flowio/statistics.h"
#include "runtime/collective_plan.h"
#include "runtime/collective_request.h"
#include "runtime/core/realm_policy.h"
#include "runtime/operation_recorder.h"
#include "runtime/outcome_agreement.h"
#include "sync/lock.h"

namespace flowio::runtime {

class CollectiveContext;
class Executor;
class GraphRunner;

// What each process tells the others at the call (one MPI_Iallgather):
// its access summary, the key of its access for the plan cache, and
// whether it has already done its part itself (accessed_early), with what
// outcome, and in atomic mode whether its access needs the lock.
struct Announcement {
  core::AccessSummary summary;
  std::uint64_t plan_key = 0;
  std::int64_t accessed_early = 0;
  std::int64_t failed_early = 0;
  std::int64_t refused = 0;    // CollectiveRequest::refused
  std::int64_t direction = 0;  // 1: a write, 2: a read
  // Atomic mode: the access touches an object shared with another process
  // (sync::AtomicMode::needs_lock). Two-phase I/O takes the lock when any
  // process's does; every process sees the same announcements, so they
  // all decide alike.
  std::int64_t needs_lock = 0;
};

// A frame header's room, for a framed message (exchange/compress_stage.h).
using FrameHeaderBytes = std::array<std::byte, exchange::kFrameHeaderBytes>;

// A client message in flight.
struct ClientRun {
  ByteBuffer staging;  // when memory is not contiguous
  // Data representation hook (issue 16): the item's bytes in the file's
  // representation, written by the convert stage without zeroing first.
  std::unique_ptr<char[]> converted;
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
};

// An Alltoallw round in flight.
struct RoundRun {
  ByteBuffer client_data;  // this process's shares, one after another
  std::int64_t posted_ns = 0;
};

class CollectiveOperation {
 public:
  CollectiveOperation(CollectiveContext& context, CollectiveRequest request,
                      std::function<void()> on_done);
  CollectiveOperation(const CollectiveOperation&) = delete;
  CollectiveOperation& operator=(const CollectiveOperation&) = delete;

  // Starts the operation on the caller's thread and returns its future; the
  // operation keeps itself alive until it completes. Blocking calls alone
  // on their file run to completion here (inline).
  static Future<std::size_t> start(CollectiveContext& context, CollectiveRequest request,
                                   std::function<void()> on_done);

  // A failure of this process's part; the first one is kept and reported
  // at the agreement. Thread safe.
  void fail(std::exception_ptr failure);
  std::exception_ptr failure() const;
  // Runs `body`, keeping what it throws as the operation's failure, so that
  // every process goes through the whole protocol and none waits forever.
  template <typename Body>
  void guarded(Body&& body) {
    try {
      body();
    } catch (...) {
      fail(std::current_exception());
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
  const std::uint64_t sequence;
  OperationRecorder recorder;
  Executor* executor = nullptr;  // set at start, with runner
  GraphRunner* runner = nullptr;
  std::int64_t started_ns = 0;

  // Offsets: this process's announcement and everyone's.
  Announcement announcement;
  std::vector<Announcement> announcements;
  std::vector<core::AccessSummary> summaries;
  std::vector<std::int64_t> view_words;  // this access described by its view
  MPI_Request gather_request = MPI_REQUEST_NULL;
  // Every process did its part before the gather and none failed: the
  // gather was the whole protocol.
  bool told_by_gather = false;

  // Realms and metadata: the plan, compiled here or kept from an earlier
  // call with the same accesses.
  std::shared_ptr<CollectivePlan> plan;
  bool plan_reused = false;
  exchange::MetadataExchange metadata;

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
  // The gather completed: everyone's announcements are in.
  void gathered(int code);

  Promise<std::size_t> promise_;
  std::function<void()> on_done_;
  std::shared_ptr<CollectiveOperation> self_;  // alive until complete()
  mutable std::mutex mutex_;                   // failure_, compression_statistics_
  std::exception_ptr failure_;
  CompressionStatistics compression_statistics_;
};

}  // namespace flowio::runtime
