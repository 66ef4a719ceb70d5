#include "runtime/engine/collective_call.h"

#include <algorithm>

#include "runtime/core/kept_block_allocator.h"
#include "runtime/engine/clock.h"
#include "runtime/engine/collective_context.h"
#include "runtime/engine/graph_runner.h"
#include "runtime/engine/inline_graph_runner.h"

namespace flowio::runtime {
namespace {

// What a call reports moved: a write, all its bytes; a read, what it found
// (`found`, when counted) or else what lies before the end of file. In
// memory bytes, whole elements, where a data representation converts (the
// counts above are of the stream in the file). May throw (the file's size).
std::size_t reported_bytes(FileContext& file, const CollectiveRequest& request,
                           std::optional<std::int64_t> found) {
  const core::Access& access = request.access;
  std::int64_t moved = access.bytes();
  if (!request.writing && !access.empty()) {
    moved = found ? *found : access.bytes_before(file.file().size());
  }
  if (request.conversion) moved = request.conversion->memory_bytes_within(moved);
  return static_cast<std::size_t>(moved);
}

}  // namespace

CollectiveCall::CollectiveCall(CollectiveContext& context, CollectiveRequest&& request,
                               std::uint64_t sequence, bool run_inline,
                               std::function<void()>&& on_done)
    : context_(context),
      runner_(context.runner(run_inline, *request.settings)),
      operation_(context.file(), std::move(request), sequence, run_inline, runner_.executor(),
                 now_ns()),
      on_done_(std::move(on_done)) {}

std::shared_ptr<CollectiveCall> CollectiveCall::make(CollectiveContext& context,
                                                     CollectiveRequest&& request,
                                                     std::function<void()>&& on_done,
                                                     bool caller_waits) {
  const OperationOrder::Turn turn = context.order().begin();
  std::shared_ptr<CollectiveCall> call;
  try {
    call = std::allocate_shared<CollectiveCall>(core::KeptBlockAllocator<CollectiveCall>(), context,
                                                std::move(request), turn.sequence,
                                                caller_waits && turn.alone, std::move(on_done));
  } catch (...) {
    context.order().abandon(turn.sequence);
    throw;
  }
  // In the background it holds itself; run() holds one that runs inline.
  if (!call->operation_.runs_inline()) call->self_ = call;
  return call;
}

void CollectiveCall::launch() {
  try {
    runner_.start(*this);
  } catch (...) {
    // MPI refused to post a message of the stage at the call: receives
    // already posted may still write into the call's announcements, whose
    // memory is left to them (the call keeps itself); the file's
    // collective calls cannot go on after this anyway. No stage touches
    // the caller's memory again.
    context_.order().abandon(operation_.sequence());
    operation_.release_memory();
    throw;
  }
}

Future<std::size_t> CollectiveCall::start(CollectiveContext& context, CollectiveRequest request,
                                          std::function<void()> on_done) {
  // Nobody waits here to drive the call (even a request marked blocking:
  // a refusal the file posts and does not wait for): in the background.
  std::shared_ptr<CollectiveCall> call =
      make(context, std::move(request), std::move(on_done), false);
  // The promise comes first: the call may complete before launch() returns.
  Future<std::size_t> future = call->promise_.emplace().get_future();
  CollectiveCall& started = *call;
  call.reset();  // the call holds itself
  started.launch();
  return future;
}

std::size_t CollectiveCall::run(CollectiveContext& context, CollectiveRequest&& request,
                                std::function<void()>&& on_done, std::exception_ptr& failure) {
  std::shared_ptr<CollectiveCall> call =
      make(context, std::move(request), std::move(on_done), true);
  CollectiveCall& running = *call;
  if (!running.operation_.runs_inline()) {
    // Others are outstanding on the file: in the background, as start().
    Future<std::size_t> future = running.promise_.emplace().get_future();
    call.reset();
    running.launch();
    try {
      return future.get();
    } catch (...) {
      failure = std::current_exception();
      return 0;
    }
  }
  // On this thread: the caller's reference keeps the call until its result
  // is read.
  try {
    running.launch();
  } catch (...) {
    running.self_ = std::move(call);  // left to what it posted (launch())
    throw;
  }
  context.inline_runner().drive([&running] { return running.done_; });
  failure = running.result_;
  return running.moved_;
}

void CollectiveCall::complete() {
  Operation& op = operation_;
  const CollectiveRequest& request = op.request();
  Agreeing& agreeing = op.phase<Agreeing>();
  const bool settled = agreeing.gather == GatherOutcome::settled;
  std::exception_ptr result = settled ? op.failure() : agreeing.outcome;
  std::size_t moved = 0;
  if (!result) {
    try {
      moved = reported_bytes(op.file(), request, agreeing.found);
    } catch (...) {
      result = std::current_exception();
    }
  }

  OperationRecord record;
  record.sequence = op.sequence();
  record.writing = request.writing;
  record.bytes = request.access.bytes();
  record.realm_policy = request.settings->realms.policy;
  record.alltoallw = request.settings->alltoallw;
  record.read_access = request.settings->window_io.file_readable;
  // Settled at its gather: nothing happened since the offsets stage's end.
  record.nanoseconds = (settled ? op.recorder().last_end_ns() : now_ns()) - op.started_ns();
  const CollectivePlan* plan = agreeing.plan.get();
  if (plan != nullptr && plan->two_phase) {
    record.aggregators = static_cast<int>(request.settings->aggregator_ranks.size());
    record.aggregator = plan->slot >= 0;
    record.iterations = static_cast<std::int64_t>(plan->client_items.size() + plan->windows.size() +
                                                  plan->live_rounds.size());
    record.plan_reused = agreeing.origin == PlanOrigin::reused;
  } else {
    // Direct mode: every process with data accessed the file itself, in
    // one pass.
    record.aggregators =
        static_cast<int>(std::count_if(agreeing.announcements.begin(), agreeing.announcements.end(),
                                       [](const Announcement& a) { return a.summary.bytes > 0; }));
    record.aggregator = agreeing.accessed_directly;
    record.iterations = agreeing.accessed_directly ? 1 : 0;
  }
  // Compression statistics where there are any, and the mode in force
  // where it applies: point-to-point two-phase I/O.
  record.compression = op.compression_statistics();
  if (plan != nullptr && plan->two_phase && !plan->alltoallw) {
    if (!record.compression) record.compression = std::make_unique<CompressionStatistics>();
    record.compression->mode = exchange::to_string(request.settings->compression.mode);
  }
  op.recorder().fill(record);
  context_.log(std::move(record));

  if (op.runs_inline()) {
    context_.order().end_alone(op.sequence());
  } else {
    context_.order().end(op.sequence());
  }
  if (promise_) {
    if (result) {
      promise_->set_exception(result);
    } else {
      promise_->set_value(moved);
    }
  } else {
    result_ = result;
    moved_ = moved;
    done_ = true;
  }
  std::function<void()> on_done = std::move(on_done_);
  std::shared_ptr<CollectiveCall> last = std::move(self_);  // may destroy this at return
  if (on_done) on_done();
}

void complete_call(CollectiveCall& call) { call.complete(); }

}  // namespace flowio::runtime
