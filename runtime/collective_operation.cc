#include "runtime/collective_operation.h"

#include <algorithm>

#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/executor.h"
#include "runtime/graph_runner.h"
#include "runtime/inline_graph_runner.h"
#include "runtime/plan_compiler.h"
#include "runtime/progress.h"

namespace flowio::runtime {
namespace {

// The key of this process's access for the plan cache: its range of the
// view's stream and the direction. The view and the hints are fixed while
// plans are kept (the file forgets them when either changes).
std::uint64_t plan_key(const CollectiveRequest& request) {
  const std::uint64_t values[] = {static_cast<std::uint64_t>(request.access.stream_begin()),
                                  static_cast<std::uint64_t>(request.access.bytes()),
                                  request.writing ? 1u : 2u};
  return PlanCache::combine(values);
}

// Whether this process's own part would let the call go direct.
bool may_go_direct(const CollectiveRequest& request, const core::AccessSummary& summary) {
  using Buffering = CollectiveSettings::Buffering;
  const Buffering buffering = request.settings->buffering;
  return buffering == Buffering::disable ||
         (buffering == Buffering::automatic && !needs_gathering(summary, *request.settings));
}

}  // namespace

CollectiveOperation::CollectiveOperation(CollectiveContext& context_, CollectiveRequest request_,
                                         std::function<void()> on_done)
    : context(context_),
      request(std::move(request_)),
      sequence(context_.take_sequence()),
      recorder(context_.rank(), request.writing, sequence),
      on_done_(std::move(on_done)) {}

Future<std::size_t> CollectiveOperation::start(CollectiveContext& context,
                                               CollectiveRequest request,
                                               std::function<void()> on_done) {
  auto operation =
      std::make_shared<CollectiveOperation>(context, std::move(request), std::move(on_done));
  CollectiveOperation& op = *operation;
  op.self_ = operation;
  op.started_ns = now_ns();
  Future<std::size_t> future = op.promise_.get_future();

  // The offsets stage.
  core::AccessSummary& summary = op.announcement.summary;
  summary = core::AccessSummary::of(
      op.request.access, op.request.settings->realms.policy == core::RealmPolicy::load_balanced);
  op.view_words = exchange::encode_view_access(op.request.access);
  summary.metadata_words = static_cast<std::int64_t>(op.view_words.size());
  op.announcement.plan_key = plan_key(op.request);
  op.announcements.resize(static_cast<std::size_t>(context.ranks()));
  const bool run_inline = context.begin_operation(op.request.blocking);
  op.runner = &context.runner(run_inline, *op.request.settings);
  op.executor = &op.runner->executor();
  // With nothing outstanding, every earlier operation is done on every
  // process (each ends with a collective step that follows all its I/O),
  // so a part that will likely go direct can be accessed now, before the
  // summaries are gathered, and its outcome announced with them: if every
  // process did so and none failed, the gather is the whole protocol. If
  // two-phase I/O is chosen after all, the early access was only
  // redundant: it moved the same bytes (collective accesses of different
  // processes must not overlap), and aggregators touch the file only after
  // the gather.
  if (run_inline && may_go_direct(op.request, summary)) {
    access_file_directly(op);
    if (op.request.writing && op.request.settings->durable && op.accessed_directly) {
      op.guarded([&] { context.file().sync_data(); });
    }
    op.announcement.accessed_early = 1;
    op.announcement.failed_early = op.failure() ? 1 : 0;
  }
  // Posted here, on the caller's thread, so that every process posts its
  // operations' gathers in the same order.
  check_mpi(
      MPI_Iallgather(&op.announcement, sizeof(Announcement), MPI_BYTE, op.announcements.data(),
                     sizeof(Announcement), MPI_BYTE, context.gather_comm(), &op.gather_request),
      "MPI_Iallgather");
  op.recorder.record(Stage::offsets, op.started_ns);
  if (!run_inline) {
    op.executor->wait_for({op.gather_request},
                          [&op](int code, std::span<const MPI_Status>) { op.gathered(code); });
    return future;
  }
  op.gathered(wait_all_on_caller({&op.gather_request, 1}, MPI_STATUSES_IGNORE));
  // Kept alive here: the operation releases itself when it completes.
  bool completed = false;
  op.on_done_ = [&completed, on_done = std::move(op.on_done_)] {
    completed = true;
    on_done();
  };
  context.inline_runner().drive([&completed] { return completed; });
  return future;
}

void CollectiveOperation::gathered(int code) {
  if (code != MPI_SUCCESS) fail(std::make_exception_ptr(MpiError("MPI_Iallgather", code)));
  summaries.clear();
  for (const Announcement& a : announcements) summaries.push_back(a.summary);
  told_by_gather = code == MPI_SUCCESS && std::all_of(announcements.begin(), announcements.end(),
                                                      [](const Announcement& a) {
                                                        return a.accessed_early && !a.failed_early;
                                                      });
  context.call_order().arrive(sequence,
                              [this] { runner->enqueue(PipelineKind::control, *this, 1); });
}

void CollectiveOperation::fail(std::exception_ptr failure) {
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = std::move(failure);
}

std::exception_ptr CollectiveOperation::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void CollectiveOperation::item_done() {
  if (remaining.fetch_sub(1) == 1) runner->enqueue(PipelineKind::agree, *this, 1);
}

void CollectiveOperation::complete() {
  std::exception_ptr result = told_by_gather ? failure() : outcome;
  std::size_t moved = 0;
  if (!result) {
    try {
      const core::Access& access = request.access;
      moved = static_cast<std::size_t>(access.bytes());
      if (!request.writing && !access.empty()) {
        // A direct read counted what it found; otherwise the file's size
        // tells where the data ended.
        const bool direct = !(plan && plan->two_phase);
        moved = static_cast<std::size_t>(direct && bytes_read_directly
                                             ? *bytes_read_directly
                                             : access.bytes_before(context.file().size()));
      }
    } catch (...) {
      result = std::current_exception();
    }
  }

  OperationRecord record;
  record.sequence = sequence;
  record.writing = request.writing;
  record.bytes = request.access.bytes();
  record.nanoseconds = now_ns() - started_ns;
  record.realm_policy = request.settings->realms.policy;
  record.alltoallw = request.settings->alltoallw;
  record.read_access = request.settings->window_io.file_readable;
  if (plan && plan->two_phase) {
    record.aggregators = static_cast<int>(request.settings->aggregator_ranks.size());
    record.aggregator = plan->slot >= 0;
    record.iterations = static_cast<std::int64_t>(plan->client_items.size() + plan->windows.size() +
                                                  plan->rounds.size());
    record.plan_reused = plan_reused;
  } else {
    // Direct mode: every process with data accessed the file itself, in
    // one pass.
    record.aggregators =
        static_cast<int>(std::count_if(summaries.begin(), summaries.end(),
                                       [](const core::AccessSummary& s) { return s.bytes > 0; }));
    record.aggregator = accessed_directly;
    record.iterations = accessed_directly ? 1 : 0;
  }
  recorder.fill(record);
  context.log(record);

  client_runs.clear();
  window_runs.clear();
  round_runs.clear();
  context.scheduler().finished(sequence);
  context.end_operation();
  if (result) {
    promise_.set_exception(result);
  } else {
    promise_.set_value(moved);
  }
  std::function<void()> on_done = std::move(on_done_);
  std::shared_ptr<CollectiveOperation> last = std::move(self_);  // may destroy this at return
  on_done();
}

}  // namespace flowio::runtime
