// CollectiveContext: what an open file lends its collective operations:
// the communicator their messages travel on, the file, the storage
// backend, the engine, and the state operations share: sequence numbers,
// the call-order gate and the data-phase scheduler, the plan cache, the
// graph runners, and the log of completed operations' statistics.
//
// The file owns it, makes its calls from one thread at a time, and waits
// for every operation before destroying it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "exchange/compression_rule.h"
#include "flowio/future.h"
#include "flowio/statistics.h"
#include "io/file_descriptor.h"
#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "runtime/call_order_gate.h"
#include "runtime/collective_request.h"
#include "runtime/data_phase_scheduler.h"
#include "runtime/operation_recorder.h"
#include "runtime/plan_cache.h"
#include "runtime/tag_sequences.h"

namespace flowio::runtime {

class Engine;
class GraphRunner;
class InlineGraphRunner;
class TbbGraphRunner;

class CollectiveContext {
 public:
  // `file_comm` is the file's own communicator: the summary gathers go on
  // it, posted by the caller's thread in call order like the file's other
  // collective calls. The rest of the traffic (point-to-point messages
  // told apart by tags, message_tags.h, and the Alltoallw rounds that
  // workers post) goes on a duplicate made here (collective over it), so
  // that no collective call of a worker meets one of the caller's.
  // `sieve_lock` is the file's (io/sieve_lock.h), which its independent
  // writes share with the aggregators' sieving writes.
  CollectiveContext(MPI_Comm file_comm, const io::FileDescriptor& file, io::SieveLock& sieve_lock,
                    io::StorageBackend& backend, Engine& engine);
  ~CollectiveContext();
  CollectiveContext(const CollectiveContext&) = delete;
  CollectiveContext& operator=(const CollectiveContext&) = delete;

  // Statistics of completed operations, oldest first (the last 1024).
  std::vector<OperationStatistics> statistics() const;

  // The view, hints or file size changed (the file calls this between
  // operations): the kept plans no longer apply. `plans_kept` bounds the
  // cache from now on.
  void forget_plans(int plans_kept);

  // For operations and their stages.
  MPI_Comm comm() const { return comm_; }
  MPI_Comm gather_comm() const { return gather_comm_; }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  const io::FileDescriptor& file() const { return file_; }
  io::SieveLock& sieve_lock() const { return sieve_lock_; }
  io::StorageBackend& backend() const { return backend_; }
  Engine& engine() const { return engine_; }
  std::span<const MPI_Datatype> byte_types() const { return byte_types_; }

  // The next sequence number (message tags); caller's thread, in call
  // order. May wait for an earlier operation to end (tag_sequences.h).
  std::uint64_t take_sequence() { return tag_sequences_.take(); }
  // Operation `sequence` has no message or receive left in flight on this
  // process. Any thread.
  void end_sequence(std::uint64_t sequence) { tag_sequences_.end(sequence); }
  // The next number at the call-order gate and the data-phase scheduler,
  // which count only the operations that reach them; caller's thread, in
  // call order (an inline operation, alone on the file, takes it after its
  // gather).
  std::uint64_t take_phase_sequence() { return next_phase_sequence_++; }
  // Counts an operation as started. Returns whether it runs inline: a
  // blocking call with nothing else outstanding on the file.
  bool begin_operation(bool blocking);
  void end_operation();
  // No operation outstanding (none begun and not ended). Only the caller's
  // thread begins operations, so the answer it gets stays true until it
  // begins one.
  bool idle() const { return outstanding_.load(std::memory_order_acquire) == 0; }
  // The runner for an operation: the inline one, or the background graph
  // (built on first use, and again when the buffer count or the number of
  // aggregators changed while nothing ran).
  GraphRunner& runner(bool run_inline, const CollectiveSettings& settings);
  InlineGraphRunner& inline_runner();

  CallOrderGate& call_order() { return call_order_; }
  DataPhaseScheduler& scheduler() { return scheduler_; }
  // Consulted and filled only in call order (the control pipeline).
  PlanCache& plans() { return plans_; }
  // The stripe unit of persistent realms, fixed by the first operation
  // that uses them; written in call order, by the realm calc.
  std::optional<std::int64_t>& persistent_unit() { return persistent_unit_; }
  // How many plans failed to compile on some process (their plan check
  // failed, runtime/plan_check.h), as this process knows. Thread safe.
  std::int64_t plan_failures() const { return plan_failures_.load(std::memory_order_relaxed); }
  void count_plan_failure() { plan_failures_.fetch_add(1, std::memory_order_relaxed); }

  void log(OperationRecord&& record);

  // The length in words of `access` described by its view
  // (exchange::encode_view_access), which every call announces: the same
  // for every access through one view, so counted once per view. Caller's
  // thread.
  std::int64_t view_access_words(const core::Access& access);

  // The compression rule of this file's operations: what it learns of the
  // links and the data carries over from one operation to the next, until
  // an operation comes with other compression settings (new hints), which
  // start a new rule. Operations keep the rule they began with. Thread
  // safe.
  std::shared_ptr<exchange::CompressionRule> compression_rule(
      const exchange::CompressionSettings& settings);

 private:
  MPI_Comm gather_comm_;  // borrowed from the file
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 1;
  const io::FileDescriptor& file_;
  io::SieveLock& sieve_lock_;
  io::StorageBackend& backend_;
  Engine& engine_;
  std::vector<MPI_Datatype> byte_types_;  // MPI_BYTE per rank, for Alltoallw
  TagSequences tag_sequences_;
  std::uint64_t next_phase_sequence_ = 0;
  CallOrderGate call_order_;
  DataPhaseScheduler scheduler_;
  PlanCache plans_;
  std::optional<std::int64_t> persistent_unit_;
  // Relaxed: read when a call is announced, on the caller's thread, after
  // the plan check that counted it completed the failed call's future (or
  // any time earlier: a count announced late only drops plans one call
  // later, alike everywhere).
  std::atomic<std::int64_t> plan_failures_{0};

  std::shared_ptr<const core::FileView> counted_view_;  // view_access_words' last view
  std::int64_t counted_words_ = 0;

  mutable std::mutex mutex_;  // log_, background_ (re)building
  std::atomic<std::size_t> outstanding_{0};
  // The last kLogged records: record i (counting from the file's first)
  // in slot i % kLogged. Slots come in chunks, allocated as the log grows:
  // small allocations reuse the process's heap (no fresh pages to fault
  // in) and growing copies nothing.
  static constexpr std::size_t kLogged = 1024;
  static constexpr std::size_t kLogChunk = 32;
  OperationRecord& log_slot(std::size_t index) const {
    return log_chunks_[index / kLogChunk][index % kLogChunk];
  }
  std::vector<std::unique_ptr<OperationRecord[]>> log_chunks_;
  std::size_t logged_ = 0;
  std::unique_ptr<InlineGraphRunner> inline_;
  std::unique_ptr<TbbGraphRunner> background_;
  std::shared_ptr<exchange::CompressionRule> compression_rule_;  // guarded by mutex_
  // By rank: whether messages to that process go through shared memory.
  std::vector<bool> shares_memory_;
};

// Starts a collective operation. Must be called by every process of the
// file, in the same order. `on_done` runs after the future completes (the
// file counts its outstanding operations with it).
Future<std::size_t> start_collective(CollectiveContext& context, CollectiveRequest request,
                                     std::function<void()> on_done);
// The same for a blocking call (request.blocking): returns the result that
// start_collective's future would hold, its failure in `failure`; throws
// only what start_collective would (the operation did not start, `on_done`
// does not run). A call alone on its file runs on the caller's thread,
// without a future.
std::size_t run_collective(CollectiveContext& context, CollectiveRequest&& request,
                           std::function<void()>&& on_done, std::exception_ptr& failure);

}  // namespace flowio::runtime
