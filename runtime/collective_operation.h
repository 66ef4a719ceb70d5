// CollectiveOperation: one process's part of one collective call, from
// the call to the completion of its future: the request, what the
// processes told each other, the plan it runs, and the state of its buffer
// iterations while they run. The stages (collective_stages.h) read and
// write it as the graph moves the operation along; each field below is
// written by one stage and read by the stages after it, which the graph's
// edges order.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "exchange/metadata_exchange.h"
#include "flowio/future.h"
#include "runtime/byte_buffer.h"
#include "runtime/collective_plan.h"
#include "runtime/collective_request.h"
#include "runtime/core/realm_policy.h"
#include "runtime/operation_recorder.h"
#include "runtime/outcome_agreement.h"

namespace flowio::runtime {

class CollectiveContext;
class Executor;
class GraphRunner;

// What each process tells the others at the call (one MPI_Iallgather):
// its access summary, the key of its access for the plan cache, and
// whether it has already done its part itself (accessed_early), with what
// outcome.
struct Announcement {
  core::AccessSummary summary;
  std::uint64_t plan_key = 0;
  std::int64_t accessed_early = 0;
  std::int64_t failed_early = 0;
};

// A client message in flight.
struct ClientRun {
  ByteBuffer staging;  // when memory is not contiguous
  char* data = nullptr;
  std::int64_t received = 0;  // reads: bytes that lay before end of file
  std::int64_t posted_ns = 0;
};

// A window in flight on its aggregator.
struct WindowRun {
  ByteBuffer buffer;
  std::vector<std::int64_t> before_end;  // reads: bytes of each part before end of file
  std::int64_t posted_ns = 0;
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

  // Data.
  bool accessed_directly = false;  // this process moved its own data
  std::optional<std::int64_t> bytes_read_directly;
  std::vector<ClientRun> client_runs;
  std::vector<WindowRun> window_runs;
  std::vector<RoundRun> round_runs;
  std::atomic<std::size_t> remaining{0};

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
  mutable std::mutex mutex_;                   // failure_
  std::exception_ptr failure_;
};

}  // namespace flowio::runtime
