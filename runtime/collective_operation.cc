// Kept whole (over 500 lines): CollectiveOperation's methods, one lifecycle from begin to complete.
#include "runtime/collective_operation.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>

#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "runtime/aggregator_conversion.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/core/injection_point.h"
#include "runtime/direct_call.h"
#include "runtime/executor.h"
#include "runtime/graph_runner.h"
#include "runtime/inline_graph_runner.h"
#include "runtime/message_tags.h"
#include "runtime/plan_compiler.h"
#include "runtime/progress.h"

namespace flowio::runtime {
namespace {

// The memory of the last finished operation, kept for the next one (one
// block per process, taken and given back without a lock): an operation
// is a few kilobytes, more than malloc keeps at hand per thread, and
// allocating and freeing it cost a small call as much as a clock read.
template <typename T>
inline std::atomic<void*> kept_block{nullptr};

template <typename T>
struct KeptBlockAllocator {
  using value_type = T;
  KeptBlockAllocator() = default;
  template <typename U>
  KeptBlockAllocator(const KeptBlockAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n == 1) {
      if (void* kept = kept_block<T>.exchange(nullptr, std::memory_order_acquire)) {
        return static_cast<T*>(kept);
      }
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* block, std::size_t n) {
    void* none = nullptr;
    if (n == 1 && kept_block<T>.compare_exchange_strong(none, block, std::memory_order_release,
                                                        std::memory_order_relaxed)) {
      return;
    }
    std::allocator<T>().deallocate(block, n);
  }
  template <typename U>
  bool operator==(const KeptBlockAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace

CollectiveOperation::CollectiveOperation(CollectiveContext& context_, CollectiveRequest request_,
                                         std::function<void()> on_done)
    : CollectiveOperation(context_, std::move(request_), std::move(on_done),
                          context_.take_sequence()) {}

CollectiveOperation::CollectiveOperation(CollectiveContext& context_, CollectiveRequest request_,
                                         std::function<void()> on_done, std::uint64_t sequence_)
    : context(context_),
      request(std::move(request_)),
      sequence(sequence_),
      recorder(context_.rank(), request.writing, sequence),
      on_done_(std::move(on_done)) {}

std::shared_ptr<CollectiveOperation> CollectiveOperation::begin(CollectiveContext& context,
                                                                CollectiveRequest request,
                                                                std::function<void()> on_done) {
  auto operation = std::allocate_shared<CollectiveOperation>(
      KeptBlockAllocator<CollectiveOperation>(), context, std::move(request), std::move(on_done));
  CollectiveOperation& op = *operation;
  op.self_ = operation;
  op.started_ns = now_ns();

  // The offsets stage.
  op.announcements.resize(static_cast<std::size_t>(context.ranks()));
  Announcement& announcement = op.announcements[static_cast<std::size_t>(context.rank())];
  core::AccessSummary& summary = announcement.summary;
  summary = core::AccessSummary::of(
      op.request.access, op.request.settings->realms.policy == core::RealmPolicy::load_balanced);
  // The description itself is encoded only if the call needs it (not
  // told by the gather), its length is announced.
  summary.metadata_words = context.view_access_words(op.request.access);
  announcement.plan_key = plan_key(op.request);
  announcement.refused = op.request.refused;
  announcement.direction = op.request.writing ? 1 : 2;
  announcement.needs_lock =
      op.request.atomic && op.request.atomic->needs_lock(op.request.access) ? 1 : 0;
  announcement.plan_failures = context.plan_failures();
  announcement.reversed_unit = reversed_unit_to_announce(op.request);
  op.inline_ = context.begin_operation(op.request.blocking);
  if (!op.inline_) op.take_phase_sequence();
  op.runner = &context.runner(op.inline_, *op.request.settings);
  op.executor = &op.runner->executor();
  // The other processes' announcements may arrive while this one does its
  // part early: their receives are posted first, so that they land in
  // place (point to point; the allgather form posts everything below).
  const int announcement_tag = message_tag(MessageKind::announcement, op.sequence);
  op.exchange.receive(op.announcements, context.rank(), context.comm(), announcement_tag);
  // With nothing outstanding, every earlier operation is done on every
  // process (each ends with a collective step that follows all its I/O),
  // so a part that will likely go direct can be accessed now, before the
  // summaries are gathered, and its outcome announced with them: if every
  // process did so and none failed, the gather is the whole protocol. If
  // two-phase I/O is chosen after all, the early access was only
  // redundant: it moved the same bytes (collective accesses of different
  // processes must not overlap), and aggregators touch the file only after
  // the gather.
  //
  // A failure here (a test's injection point, an early access) is
  // announced with the summary: every process then goes straight to the
  // agreement.
  op.guarded([] { core::injection_point("collective.offsets"); }, "offsets");
  if (op.request.failed_before) op.fail(op.request.failed_before, op.request.failed_before_stage);
  if (op.inline_ && op.request.refused == 0 && !op.failure() &&
      may_go_direct(op.request, summary)) {
    sync::Lease own_bytes;  // atomic mode: the caller waits for it here
    if (op.request.atomic) {
      op.guarded(
          [&] {
            own_bytes = op.request.atomic->lock_access(op.request.access, op.request.writing).get();
          },
          "direct_lock");
    }
    // Since the call, only a few arithmetic steps were taken, unless a
    // lease was waited for: the access's span starts at the call (a clock
    // read costs 30 ns on these machines).
    if (!op.failure()) access_file_directly(op, op.request.atomic ? -1 : op.started_ns);
    if (op.request.writing && op.request.settings->durable && op.accessed_directly) {
      op.guarded([&] { context.file().sync_data(); }, "persist");
    }
    own_bytes.release();
    announcement.accessed_early = 1;
  }
  announcement.failed_early = op.failure() ? 1 : 0;
  // Posted here, on the caller's thread, so that every process posts its
  // operations' gathers (where they are collective calls) in the same
  // order.
  op.gather_requests_ = op.exchange.post(
      op.announcements, context.rank(), context.comm(), announcement_tag, context.gather_comm(),
      op.request.settings->realms.policy == core::RealmPolicy::load_balanced);
  // The offsets stage ends when the announcements are in: here when
  // nothing travels, else in gathered().
  if (op.gather_requests_.empty()) {
    // Alone, with its part accessed early, nothing happened since that
    // access ended: its end is the offsets stage's.
    const bool nothing_since =
        op.accessed_directly && !(op.request.writing && op.request.settings->durable);
    op.recorder.record_until(Stage::offsets, op.started_ns,
                             nothing_since ? op.recorder.last_end_ns() : now_ns());
  }
  return operation;
}

void CollectiveOperation::run_inline() {
  // Kept alive by the caller's reference; the operation lets go of its own
  // when it completes.
  bool completed = false;
  completed_ = &completed;
  gathered(gather_requests_.empty() ? MPI_SUCCESS
                                    : wait_all_on_caller(gather_requests_, MPI_STATUSES_IGNORE));
  if (!completed) context.inline_runner().drive([&completed] { return completed; });
}

Future<std::size_t> CollectiveOperation::start(CollectiveContext& context,
                                               CollectiveRequest request,
                                               std::function<void()> on_done) {
  std::shared_ptr<CollectiveOperation> operation =
      begin(context, std::move(request), std::move(on_done));
  CollectiveOperation& op = *operation;
  Future<std::size_t> future = op.promise_.emplace().get_future();
  if (op.inline_) {
    op.run_inline();
    return future;
  }
  if (op.gather_requests_.empty()) {
    op.gathered(MPI_SUCCESS);
  } else {
    op.executor->wait_for({op.gather_requests_.begin(), op.gather_requests_.end()},
                          [&op](int code, std::span<const MPI_Status>) { op.gathered(code); });
  }
  return future;
}

std::size_t CollectiveOperation::run(CollectiveContext& context, CollectiveRequest&& request,
                                     std::function<void()>&& on_done, std::exception_ptr& failure) {
  if (std::optional<std::size_t> moved = run_alone(context, request, failure)) {
    on_done();
    return *moved;
  }
  if (std::optional<std::size_t> moved = run_settled(context, request, on_done, failure)) {
    return *moved;
  }
  std::shared_ptr<CollectiveOperation> operation =
      begin(context, std::move(request), std::move(on_done));
  CollectiveOperation& op = *operation;
  if (!op.inline_) {
    // Others are outstanding on the file: in the background, as start().
    Future<std::size_t> future = op.promise_.emplace().get_future();
    if (op.gather_requests_.empty()) {
      op.gathered(MPI_SUCCESS);
    } else {
      op.executor->wait_for({op.gather_requests_.begin(), op.gather_requests_.end()},
                            [&op](int code, std::span<const MPI_Status>) { op.gathered(code); });
    }
    operation.reset();
    try {
      return future.get();
    } catch (...) {
      failure = std::current_exception();
      return 0;
    }
  }
  op.run_inline();
  failure = op.result_;
  return op.moved_;
}

std::size_t CollectiveOperation::resume_at_gather(CollectiveContext& context,
                                                  CollectiveRequest&& request,
                                                  std::function<void()>&& on_done,
                                                  SettledAttempt&& attempt,
                                                  std::exception_ptr& failure) {
  auto operation = std::allocate_shared<CollectiveOperation>(
      KeptBlockAllocator<CollectiveOperation>(), context, std::move(request), std::move(on_done),
      attempt.sequence);
  CollectiveOperation& op = *operation;
  op.self_ = operation;
  op.started_ns = attempt.started_ns;
  op.announcements = std::move(attempt.announcements);
  // What begin() leaves for an inline operation that accessed its part
  // early, and what gathered() records when the announcements came.
  op.inline_ = true;
  op.runner = &context.runner(true, *op.request.settings);
  op.executor = &op.runner->executor();
  const EarlyAccess& early = attempt.early;
  if (early.failure) op.fail(early.failure, early.failed_stage);
  if (early.accessed) {
    op.recorder.record_until(Stage::io, early.io_begin_ns, early.io_end_ns, -1, "", early.io_bytes);
    op.recorder.add_method(Method::direct);
    if (!op.request.writing) op.bytes_read_directly = early.io_bytes;
    op.accessed_directly = true;
  }
  op.recorder.record_until(Stage::offsets, op.started_ns, attempt.gathered_ns);
  bool completed = false;
  op.completed_ = &completed;
  op.gathered(attempt.code);
  if (!completed) context.inline_runner().drive([&completed] { return completed; });
  failure = op.result_;
  return op.moved_;
}

void CollectiveOperation::gathered(int code) {
  if (!gather_requests_.empty()) recorder.record(Stage::offsets, started_ns);
  if (code != MPI_SUCCESS) {
    fail(std::make_exception_ptr(MpiError("MPI_Iallgather", code)), "offsets");
    failed_at_gather = true;
  }
  // Every process sees the same announcements, so every one fails alike
  // here, and the stages after the gather move nothing.
  if (code == MPI_SUCCESS) {
    for (std::size_t rank = 0; rank < announcements.size(); ++rank) {
      const Announcement& a = announcements[rank];
      if (a.refused != 0) {
        fail(std::make_exception_ptr(
                 UsageError(static_cast<ErrorCode>(a.refused - 1),
                            "process " + std::to_string(rank) +
                                " passed bad arguments to this collective call")),
             "offsets");
        failed_at_gather = true;
        break;
      }
      if (a.direction != announcements.front().direction) {
        fail(std::make_exception_ptr(
                 UsageError(ErrorCode::not_same,
                            "processes made different collective calls: some read, some write")),
             "offsets");
        failed_at_gather = true;
        break;
      }
    }
  }
  told_by_gather = code == MPI_SUCCESS && std::all_of(announcements.begin(), announcements.end(),
                                                      [](const Announcement& a) {
                                                        return a.accessed_early && !a.failed_early;
                                                      });
  if (told_by_gather) {
    // Nothing is left to plan or move: the operation takes its turn at the
    // gate and the scheduler, if it has one, without waiting there, and is
    // complete.
    if (has_phase_sequence_) context.call_order().pass_through(phase_sequence);
    complete();
    return;
  }
  if (!has_phase_sequence_) take_phase_sequence();
  summaries.reserve(announcements.size());
  for (const Announcement& a : announcements) summaries.push_back(a.summary);
  view_words = exchange::encode_view_access(request.access);
  context.call_order().arrive(phase_sequence,
                              [this] { runner->enqueue(PipelineKind::control, *this, 1); });
}

void CollectiveOperation::take_phase_sequence() {
  phase_sequence = context.take_phase_sequence();
  has_phase_sequence_ = true;
}

void CollectiveOperation::fail(std::exception_ptr failure, const char* stage) {
  std::lock_guard lock(mutex_);
  if (failure_) return;
  failure_ = std::move(failure);
  failed_stage_ = stage;
  failed_.store(true, std::memory_order_release);
}

const char* CollectiveOperation::failed_stage() const {
  std::lock_guard lock(mutex_);
  return failed_stage_;
}

std::exception_ptr CollectiveOperation::failure() const {
  // Most operations never fail: they ask without taking the lock.
  if (!failed_.load(std::memory_order_acquire)) return nullptr;
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
  compression_used_.store(true, std::memory_order_release);
}

void CollectiveOperation::complete() {
  std::exception_ptr result = told_by_gather ? failure() : outcome;
  std::size_t moved = 0;
  if (!result) {
    try {
      // A direct read counted what it found, and so did the messages of a
      // two-phase one (each aggregator sends what its read found); rounds
      // carry fixed counts, so the file's size tells there.
      std::optional<std::int64_t> found;
      const bool direct = !(plan && plan->two_phase);
      if (direct) {
        found = bytes_read_directly;
      } else if (plan->rounds.empty()) {
        std::int64_t received = 0;
        for (const ClientRun& run : client_runs) received += run.received;
        found = received;
      }
      moved = reported_bytes(context, request, found);
    } catch (...) {
      result = std::current_exception();
    }
  }

  OperationRecord record = record_of(request, sequence);
  // Settled at its gather: nothing happened since the offsets stage's end.
  record.nanoseconds = (told_by_gather ? recorder.last_end_ns() : now_ns()) - started_ns;
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
        static_cast<int>(std::count_if(announcements.begin(), announcements.end(),
                                       [](const Announcement& a) { return a.summary.bytes > 0; }));
    record.aggregator = accessed_directly;
    record.iterations = accessed_directly ? 1 : 0;
  }
  // Compression statistics where there are any, and the mode in force
  // where it applies: point-to-point two-phase I/O.
  if (compression_used_.load(std::memory_order_acquire)) {
    std::lock_guard lock(mutex_);
    record.compression = std::make_unique<CompressionStatistics>(compression_statistics_);
  }
  if (plan && plan->two_phase && plan->rounds.empty()) {
    if (!record.compression) record.compression = std::make_unique<CompressionStatistics>();
    record.compression->mode = exchange::to_string(request.settings->compression.mode);
  }
  recorder.fill(record);
  context.log(std::move(record));

  client_runs.clear();
  window_runs.clear();
  round_runs.clear();
  if (!told_by_gather) {
    context.scheduler().finished(phase_sequence);
  } else if (has_phase_sequence_) {
    context.scheduler().skip(phase_sequence);
  }
  context.end_sequence(sequence);
  context.end_operation();
  if (!promise_) {
    result_ = result;
    moved_ = moved;
  } else if (result) {
    promise_->set_exception(result);
  } else {
    promise_->set_value(moved);
  }
  std::function<void()> on_done = std::move(on_done_);
  if (completed_) *completed_ = true;
  std::shared_ptr<CollectiveOperation> last = std::move(self_);  // may destroy this at return
  on_done();
}

}  // namespace flowio::runtime
