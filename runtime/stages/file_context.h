// FileContext: what an open file lends the stages of its collective
// operations: the communicator their messages travel on, the file, its
// storage backend and sieve lock, the workers that convert data, and what
// operations hand on to later ones of the same file: the plan cache, the
// persistent realms' unit, the count of failed plans, the compression rule.
//
// The file owns it (through engine/collective_context.h) and outlives
// every operation.
#pragma once

#include <mpi.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "exchange/compression_rule.h"
#include "io/file_descriptor.h"
#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "runtime/core/access.h"
#include "runtime/plan/plan_cache.h"

namespace flowio::runtime {

class FileContext {
 public:
  // `file_comm` is the file's own communicator: the gathers of >
  // AnnouncementExchange::kMostPointToPointRanks processes go on it, posted
  // by the caller's thread in call order like the file's other collective
  // calls. The rest of the traffic (point-to-point messages told apart by
  // tags, and the Alltoallw rounds that workers post) goes on a duplicate
  // made here (collective over it), so that no collective call of a worker
  // meets one of the caller's. `sieve_lock` is the file's
  // (io/sieve_lock.h), which its independent writes share with the
  // aggregators' sieving writes. `workers` convert data (another data
  // representation) beside the thread that moves it.
  FileContext(MPI_Comm file_comm, const io::FileDescriptor& file, io::SieveLock& sieve_lock,
              io::StorageBackend& backend, tbb::task_arena& workers);
  ~FileContext();
  FileContext(const FileContext&) = delete;
  FileContext& operator=(const FileContext&) = delete;

  MPI_Comm comm() const { return comm_; }
  MPI_Comm gather_comm() const { return gather_comm_; }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  const io::FileDescriptor& file() const { return file_; }
  io::SieveLock& sieve_lock() const { return sieve_lock_; }
  io::StorageBackend& backend() const { return backend_; }
  tbb::task_arena& workers() const { return workers_; }
  std::span<const MPI_Datatype> byte_types() const { return byte_types_; }

  // Consulted and filled only by the realms stage, which operations pass
  // one at a time in call order.
  PlanCache& plans() { return plans_; }
  // The stripe unit of persistent realms, fixed by the first operation
  // that uses them; written in call order, by the realms stage.
  std::optional<std::int64_t>& persistent_unit() { return persistent_unit_; }
  // How many plans failed to compile on some process (their plan check
  // failed, plan/plan_check.h), as this process knows. Thread safe.
  std::int64_t plan_failures() const { return plan_failures_.load(std::memory_order_relaxed); }
  void count_plan_failure() { plan_failures_.fetch_add(1, std::memory_order_relaxed); }
  // The view, hints or file size changed (between operations): the kept
  // plans no longer apply. `plans_kept` bounds the cache from now on.
  void forget_plans(int plans_kept);

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
  tbb::task_arena& workers_;
  std::vector<MPI_Datatype> byte_types_;  // MPI_BYTE per rank, for Alltoallw
  PlanCache plans_;
  std::optional<std::int64_t> persistent_unit_;
  // Relaxed: read when a call is announced, on the caller's thread, after
  // the plan check that counted it completed the failed call's future (or
  // any time earlier: a count announced late only drops plans one call
  // later, alike everywhere).
  std::atomic<std::int64_t> plan_failures_{0};
  std::shared_ptr<const core::FileView> counted_view_;  // view_access_words' last view
  std::int64_t counted_words_ = 0;
  std::mutex mutex_;  // compression_rule_
  std::shared_ptr<exchange::CompressionRule> compression_rule_;
  // By rank: whether messages to that process go through shared memory.
  std::vector<bool> shares_memory_;
};

}  // namespace flowio::runtime
