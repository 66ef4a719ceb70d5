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
  op.announcement.refused = op.request.refused;
  op.announcement.direction = op.request.writing ? 1 : 2;
  op.announcement.needs_lock =
      op.request.atomic && op.request.atomic->needs_lock(op.request.access) ? 1 : 0;
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
  if (run_inline && op.request.refused == 0 && may_go_direct(op.request, summary)) {
    sync::Lease own_bytes;  // atomic mode: the caller waits for it here
    if (op.request.atomic) {
      op.guarded([&] {
        own_bytes = op.request.atomic->lock_access(op.request.access, op.request.writing).get();
      });
    }
    if (!op.failure()) access_file_directly(op);
    if (op.request.writing && op.request.settings->durable && op.accessed_directly) {
      op.guarded([&] { context.file().sync_data(); });
    }
    own_bytes.release();
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
  // Every process sees the same announcements, so every one fails alike
  // here, and the stages after the gather move nothing.
  if (code == MPI_SUCCESS) {
    for (std::size_t rank = 0; rank < announcements.size(); ++rank) {
      const Announcement& a = announcements[rank];
      if (a.refused != 0) {
        fail(std::make_exception_ptr(
            UsageError(static_cast<ErrorCode>(a.refused - 1),
                       "process " + std::to_string(rank) +
                           " passed bad arguments to this collective call")));
        break;
      }
      if (a.direction != announcements.front().direction) {
        fail(std::make_exception_ptr(
            UsageError(ErrorCode::not_same,
                       "processes made different collective calls: some read, some write")));
        break;
      }
    }
  }
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
  if (remaining.fetch_sub(1) != 1) return;
  if (compression) {
    // Every item has added its statistics: the stage is complete.
    CompressionStatistics stage;
    {
      std::lock_guard lock(mutex_);
      stage = compression_statistics_;
    }
    compression->finish(static_cast<double>(now_ns() - data_phase_ns) * 1e-9, stage);
  }
  runner->enqueue(PipelineKind::agree, *this, 1);
}

void CollectiveOperation::add_compression(const CompressionStatistics& statistics) {
  std::lock_guard lock(mutex_);
  exchange::add_statistics(compression_statistics_, statistics);
}

void CollectiveOperation::complete() {
  std::exception_ptr result = told_by_gather ? failure() : outcome;
  std::size_t moved = 0;
  if (!result) {
    try {
      const core::Access& access = request.access;
      moved = static_cast<std::size_t>(access.bytes());
      if (!request.writing && !access.empty()) {
        // A direct read counted what it found, and so did the messages of
        // a two-phase one (each aggregator sends what its read found);
        // rounds carry fixed counts, so the file's size tells there.
        const bool direct = !(plan && plan->two_phase);
        if (direct && bytes_read_directly) {
          moved = static_cast<std::size_t>(*bytes_read_directly);
        } else if (!direct && plan->rounds.empty()) {
          std::int64_t received = 0;
          for (const ClientRun& run : client_runs) received += run.received;
          moved = static_cast<std::size_t>(received);
        } else {
          moved = static_cast<std::size_t>(access.bytes_before(context.file().size()));
        }
      }
      // Counts above are of the stream in the file; the caller is told
      // memory bytes, whole elements (data representation hook).
      if (request.conversion) {
        moved = static_cast<std::size_t>(
            request.conversion->memory_bytes_within(static_cast<std::int64_t>(moved)));
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
  {
    std::lock_guard lock(mutex_);
    record.compression = compression_statistics_;
  }
  // The mode in force where it applies: point-to-point two-phase I/O.
  if (plan && plan->two_phase && plan->rounds.empty()) {
    record.compression.mode = exchange::to_string(request.settings->compression.mode);
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
