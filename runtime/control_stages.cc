#include "runtime/control_stages.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "flowio/error.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/executor.h"
#include "runtime/message_tags.h"
#include "runtime/plan_cache.h"
#include "runtime/plan_check.h"
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
// answer: nothing before the cache's answer can throw, and the cache never
// allocates, so a failure here cannot make one process's cache or choice
// unlike the others'.
//
// A process whose realm calc fails (or that failed earlier, alone) has no
// plan: it sends no descriptions and takes part in the plan check, which
// tells every process (plan_check_stage).
void realms_stage(CollectiveOperation& op, std::size_t, Next next) {
  const std::int64_t begin = now_ns();
  if (op.failed_at_gather || anyone_failed_early(op)) {
    next();
    return;
  }
  enter_stage(op, "collective.realms");
  const CollectiveSettings& settings = *op.request.settings;
  CollectiveContext& context = op.context;
  if (!decide_two_phase(op.summaries, settings)) {
    op.guarded(
        [&] {
          op.plan = std::make_shared<CollectivePlan>();
          op.plan->complete = true;
        },
        "realms");
    op.recorder.record(Stage::realms, begin);
    next();
    return;
  }
  std::uint64_t key = PlanCache::kNoKeys;
  std::int64_t pieces = 0;
  std::int64_t plan_failures = 0;
  for (const Announcement& a : op.announcements) {
    key = PlanCache::mix(key, a.plan_key);
    pieces += a.summary.pieces;
    plan_failures = std::max(plan_failures, a.plan_failures);
  }
  context.plans().note_failures(plan_failures);
  if (std::optional<std::shared_ptr<CollectivePlan>> kept = context.plans().find(key)) {
    // A null plan is one whose compiling failed here at once: every other
    // process knows of the failure (start_data_phase).
    op.plan = std::move(*kept);
    op.plan_reused = true;
    op.recorder.record(Stage::realms, begin);
    next();
    return;
  }
  op.compiling = true;
  std::shared_ptr<CollectivePlan> plan;
  op.guarded([&] { plan = std::make_shared<CollectivePlan>(); }, "realms");
  // Kept on every process alike, made or not: the check marks it complete
  // only if every process made its part.
  if (pieces <= kMostPiecesKept) context.plans().insert(key, plan);
  op.plan = std::move(plan);
  if (op.plan && !op.failure()) {
    op.guarded(
        [&] {
          plan_realms_step(settings, op.summaries, context.rank(), context.persistent_unit(),
                           *op.plan);
        },
        "realms");
  }
  op.recorder.record(Stage::realms, begin);
  next();
}

// Metadata transfer: clients describe their accesses to the aggregators
// whose realms they meet. A process that failed already posts nothing:
// its notice in the plan check takes the place of its descriptions, and
// its own receives are made there.
void metadata_stage(CollectiveOperation& op, std::size_t, Next next) {
  if (!op.compiling) {
    next();
    return;
  }
  enter_stage(op, "collective.metadata");
  if (op.failure()) {
    next();
    return;
  }
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
        op.metadata_posted = true;
      },
      "metadata");
  op.executor->wait_for(std::move(requests), [&op, begin, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("metadata exchange", code)), "metadata");
    } else if (op.metadata_posted) {
      op.metadata.received(statuses);
    }
    op.recorder.record(Stage::metadata, begin, -1, "", 0, op.metadata.messages());
    next();
  });
}

// The rest of the plan (items, windows, rounds), made by a process that
// has its part so far and every client's description (a client that sent
// its plan check notice instead has none: the check fails everywhere).
void plan_stage(CollectiveOperation& op, std::size_t, Next next) {
  if (op.compiling) {
    enter_stage(op, "collective.plan");
    const std::int64_t begin = now_ns();
    if (!op.failure() && op.metadata_posted && op.metadata.every_description_came()) {
      op.guarded(
          [&] {
            CollectivePlan& plan = *op.plan;
            std::vector<core::Access> accesses = op.metadata.decode();
            op.add_compression(op.metadata_compression);
            for (std::size_t i = 0; i < plan.clients.size(); ++i) {
              plan.clients[i].access = std::move(accesses[i]);
            }
            plan_items_step(*op.request.settings, op.request.access, op.context.ranks(), plan);
          },
          "plan");
    }
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
  // Decided alike everywhere, whether this process has its plan or not:
  // the lease is asked for collectively.
  const bool two_phase = op.compiling || op.plan_reused || (op.plan && op.plan->two_phase);
  if (op.request.atomic && lock_needed && two_phase && !anyone_failed_early(op)) {
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

// A compiled plan: every process learns whether every process made its
// part (plan_check.h) before any data phase starts. A failed check fails
// no process by itself (the process that could not make its part reports
// its failure at the outcome agreement), marks the plan as never to be
// rerun, and counts a failure, which the next calls announce so that
// every process drops its kept plans alike.
void plan_check_stage(CollectiveOperation& op, std::size_t, Next next) {
  if (!op.compiling) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  const bool made = !op.failure();
  const auto ranks = static_cast<std::size_t>(op.context.ranks());
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        std::vector<PlanCheck::Peer> peers(ranks);
        if (op.metadata_posted) {
          // Descriptions came (or notices in their place) from the
          // clients; from the others, only a notice comes.
          const std::vector<CollectiveClient>& clients = op.plan->clients;
          for (std::size_t i = 0; i < clients.size(); ++i) {
            peers[static_cast<std::size_t>(clients[i].rank)].failed =
                !op.metadata.description_came(i);
          }
        } else {
          // Which processes sent this one a description is not known here.
          const bool framed =
              op.request.settings->compression.mode != exchange::CompressionMode::off;
          for (std::size_t rank = 0; rank < ranks; ++rank) {
            peers[rank].room =
                exchange::MetadataExchange::wire_bytes(op.summaries[rank].metadata_words, framed);
          }
        }
        requests =
            op.plan_check.post(op.context.comm(), message_tag(MessageKind::metadata, op.sequence),
                               op.context.rank(), made, peers);
      },
      "plan");
  // Only a failed allocation or MPI error above: the check's requests are
  // then not all posted, and this process's partners may wait for its
  // notice (an MPI error is fatal in practice; see the note of issue 15).
  op.executor->wait_for(std::move(requests), [&op, begin, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("plan check", code)), "plan");
    }
    std::vector<MPI_Request> seconds;
    op.guarded([&] { seconds = op.plan_check.after_first(statuses); }, "plan");
    op.executor->wait_for(
        std::move(seconds), [&op, begin, next](int code, std::span<const MPI_Status> statuses) {
          if (code != MPI_SUCCESS) {
            op.fail(std::make_exception_ptr(MpiError("plan check", code)), "plan");
          }
          if (!op.failure() && op.plan_check.everyone_made(statuses)) {
            op.plan->complete = true;
          } else {
            op.failed_at_plan_check = true;
            op.context.count_plan_failure();
          }
          op.recorder.record(Stage::realms, begin, -1, " check");
          next();
        });
  });
}

// Leaving the control pipeline: the operation waits for the scheduler to
// start its data phase (at once, unless an earlier operation it could
// interfere with is still running). Nothing touches the operation after
// this: it may run to completion from here.
void leave_control(CollectiveOperation& op) {
  DataFootprint footprint;
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
      "control", {realms_stage, metadata_stage, plan_stage, plan_check_stage}, true, leave_control};
  return kControl;
}

}  // namespace flowio::runtime
