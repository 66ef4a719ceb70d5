// CollectiveContext: a file's collective operations, as the engine runs
// them: what the file lends their stages (FileContext), the one owner of
// their order (OperationOrder), the two runners, and the log of completed
// operations' statistics.
//
// The file owns it, makes its calls from one thread at a time, and waits
// for every operation before destroying it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "flowio/future.h"
#include "flowio/statistics.h"
#include "runtime/engine/operation_order.h"
#include "runtime/stages/collective_request.h"
#include "runtime/stages/file_context.h"
#include "runtime/stages/operation_recorder.h"

namespace flowio::runtime {

class Engine;
class GraphRunner;
class InlineGraphRunner;
class TbbGraphRunner;

class CollectiveContext {
 public:
  // `file_comm`, `file`, `sieve_lock` and `backend`: as FileContext takes
  // them. `engine`'s threads run the background runner.
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
  void forget_plans(int plans_kept) { file_.forget_plans(plans_kept); }

  FileContext& file() { return file_; }
  OperationOrder& order() { return order_; }
  // The runner for a call, chosen here and nowhere else: on the caller's
  // thread (inline) for a blocking call alone on its file, else the
  // background graph (built on first use, and again when the buffer count
  // or the number of aggregators changed while nothing ran).
  GraphRunner& runner(bool run_inline, const CollectiveSettings& settings);
  // The inline runner, whose caller drives it (CollectiveCall::run).
  InlineGraphRunner& inline_runner();

  // Keeps a completed operation's record. Thread safe.
  void log(OperationRecord&& record);

 private:
  FileContext file_;
  OperationOrder order_;
  Engine& engine_;
  mutable std::mutex mutex_;  // log_, background_ (re)building
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
};

// Starts a collective operation. Must be called by every process of the
// file, in the same order. `on_done`, when not empty, runs after the
// future completes (the file counts its outstanding operations with it);
// it is the call's last touch of anything but itself, and the background
// runner's destructor waits for it.
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
