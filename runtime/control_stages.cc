#include "runtime/control_stages.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "flowio/error.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/executor.h"
#include "runtime/message_tags.h"
#include "runtime/plan_compiler.h"
#include "runtime/stage_support.h"

namespace flowio::runtime {
namespace {

// Plans of calls whose processes together have more pieces than this are
// not kept: their window lists would hold too much memory for what a rerun
// saves. Decided from the gathered summaries, the same on every process.
constexpr std::int64_t kMostPiecesKept = std::int64_t{1} << 20;

// Realm calc, or the plan kept from an earlier call with the same
// accesses. Runs in call order on every process (a serial stage entered
// through the CallOrderGate), so every process's cache gives the same
// answer.
//
// The plan is this process's part in every later message of the
// operation, so a failure of this stage (or of an earlier one of this
// process alone) does not stop it from being made: only the failures
// every process sees alike at the gather do. A failure of the realm
// calculation itself leaves the process without a plan (start_data_phase).
void realms_stage(CollectiveOperation& op, std::size_t, Next next) {
  const std::int64_t begin = now_ns();
  if (op.failed_at_gather || anyone_failed_early(op)) {
    next();
    return;
  }
  enter_stage(op, "collective.realms");
  const CollectiveSettings& settings = *op.request.settings;
  op.guarded(
      [&] {
        if (!decide_two_phase(op.summaries, settings)) {
          op.plan = std::make_shared<CollectivePlan>();
          op.plan->complete = true;
          return;
        }
        CollectiveContext& context = op.context;
        std::vector<std::uint64_t> keys;
        std::int64_t pieces = 0;
        for (const Announcement& a : op.announcements) {
          keys.push_back(a.plan_key);
          pieces += a.summary.pieces;
        }
        const std::uint64_t key = PlanCache::combine(keys);
        if (std::shared_ptr<CollectivePlan> kept = context.plans().find(key)) {
          op.plan = std::move(kept);
          op.plan_reused = true;
          return;
        }
        op.plan = std::make_shared<CollectivePlan>();
        plan_realms_step(settings, op.summaries, context.rank(), context.persistent_unit(),
                         *op.plan);
        if (pieces <= kMostPiecesKept) context.plans().insert(key, op.plan);
      },
      "realms");
  op.recorder.record(Stage::realms, begin);
  next();
}

// Metadata transfer: clients describe their accesses to the aggregators
// whose realms they meet. Posted by a process that failed too: its
// aggregators wait for its description, its clients send theirs.
void metadata_stage(CollectiveOperation& op, std::size_t, Next next) {
  const bool compiling = op.plan && op.plan->two_phase && !op.plan_reused;
  if (!compiling) {
    next();
    return;
  }
  enter_stage(op, "collective.metadata");
  const std::int64_t begin = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const CollectivePlan& plan = *op.plan;
        std::vector<int> client_ranks;
        std::vector<std::int64_t> client_words;
        for (const CollectiveClient& client : plan.clients) {
          client_ranks.push_back(client.rank);
          client_words.push_back(
              op.summaries[static_cast<std::size_t>(client.rank)].metadata_words);
        }
        requests = op.metadata.post(
            op.context.comm(), message_tag(MessageKind::metadata, op.sequence), op.request.access,
            op.view_words, *plan.layout, op.request.settings->aggregator_ranks, plan.slot,
            client_ranks, client_words, begin_compression(op) ? &*op.compression : nullptr,
            op.metadata_compression);
      },
      "metadata");
  op.executor->wait_for(std::move(requests), [&op, begin, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("metadata exchange", code)), "metadata");
    } else {
      op.metadata.received(statuses);
    }
    op.recorder.record(Stage::metadata, begin, -1, "", 0, op.metadata.messages());
    next();
  });
}

// The rest of the plan (items, windows, rounds), then the operation waits
// for the scheduler to start its data phase. Made by a process that
// failed too, as the realms are.
void plan_stage(CollectiveOperation& op, std::size_t, Next next) {
  if (op.plan && op.plan->two_phase && !op.plan_reused) {
    enter_stage(op, "collective.plan");
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] {
          CollectivePlan& plan = *op.plan;
          std::vector<core::Access> accesses = op.metadata.decode();
          op.add_compression(op.metadata_compression);
          for (std::size_t i = 0; i < plan.clients.size(); ++i) {
            plan.clients[i].access = std::move(accesses[i]);
          }
          plan_items_step(*op.request.settings, op.request.access, op.context.ranks(), plan);
          plan.complete = true;
        },
        "plan");
    op.view_words.clear();
    op.recorder.record(Stage::realms, begin, -1, " items");
  }
  // Atomic mode: every process asks in call order (this stage is serial);
  // the leader takes one lease over every process's access for all. Not
  // when every access touches only objects private to its process: no
  // other access can conflict with any of them.
  const bool lock_needed =
      std::any_of(op.announcements.begin(), op.announcements.end(),
                  [](const Announcement& announced) { return announced.needs_lock != 0; });
  if (op.request.atomic && lock_needed && op.plan && op.plan->two_phase &&
      !anyone_failed_early(op)) {
    sync::ByteRange hull{std::numeric_limits<std::int64_t>::max(), 0};
    for (const core::AccessSummary& s : op.summaries) {
      if (s.bytes == 0) continue;
      hull.begin = std::min(hull.begin, s.file_begin);
      hull.end = std::max(hull.end, s.file_end);
    }
    op.guarded(
        [&] { op.atomic_pending = op.request.atomic->lock_collective(hull, op.request.writing); },
        "plan");
  }
  next();
}

// Leaving the control pipeline: the operation waits for the scheduler to
// start its data phase (at once, unless an earlier operation it could
// interfere with is still running). Nothing touches the operation after
// this: it may run to completion from here.
void leave_control(CollectiveOperation& op) {
  DataFootprint footprint;
  footprint.tag_sequence = op.sequence;
  footprint.writing = op.request.writing;
  footprint.alltoallw = op.request.settings->alltoallw && op.plan && op.plan->two_phase;
  footprint.begin = std::numeric_limits<std::int64_t>::max();
  footprint.end = std::numeric_limits<std::int64_t>::min();
  for (const core::AccessSummary& s : op.summaries) {
    if (s.bytes == 0) continue;
    footprint.begin = std::min(footprint.begin, s.file_begin);
    footprint.end = std::max(footprint.end, s.file_end);
  }
  if (footprint.begin > footprint.end) footprint.begin = footprint.end = 0;
  op.context.scheduler().ready(op.phase_sequence, footprint, [&op] { start_data_phase(op); });
}

}  // namespace

const Pipeline& control_pipeline() {
  static const Pipeline kControl{
      "control", {realms_stage, metadata_stage, plan_stage}, true, leave_control};
  return kControl;
}

}  // namespace flowio::runtime
