// The plan: its items (this process's messages, its windows with their
// pieces, the Alltoallw rounds), made once the clients' descriptions are
// in, and the check that every process made its part. Both are recorded as
// parts of the realms stage (" items", " check").
#include <algorithm>
#include <limits>
#include <vector>

#include "flowio/error.h"
#include "runtime/engine/clock.h"
#include "runtime/plan/plan_compiler.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

// A process that has its part so far and every client's description makes
// the rest of the plan (a client that sent its plan check notice instead
// has none: the check fails everywhere).
void plan_stage(Operation& op, std::size_t, Next next) {
  Planning& planning = op.phase<Planning>();
  if (planning.origin == PlanOrigin::compiled) {
    enter_stage(op, "collective.plan");
    const std::int64_t begin = now_ns();
    if (!op.failed() && planning.descriptions_posted &&
        planning.metadata.every_description_came()) {
      op.guarded(
          [&] {
            CollectivePlan& plan = *planning.plan;
            std::vector<core::Access> accesses = planning.metadata.decode();
            op.add_compression(planning.metadata_compression);
            for (std::size_t i = 0; i < plan.clients.size(); ++i) {
              plan.clients[i].access = std::move(accesses[i]);
            }
            plan_items_step(*op.request().settings, op.request().access, op.file().ranks(), plan);
          },
          "plan");
    }
    std::vector<std::int64_t>().swap(planning.view_words);
    op.recorder().record(Stage::realms, begin, -1, " items");
  }
  // Atomic mode: every process asks in call order (the control stages pass
  // operations one at a time); the leader takes one lease over every
  // process's access for all. Not when every access touches only objects
  // private to its process: no other access can conflict with any of them.
  // Decided alike everywhere, whether this process has its plan or not:
  // the lease is asked for collectively.
  const CollectiveRequest& request = op.request();
  const bool lock_needed =
      std::any_of(planning.announcements.begin(), planning.announcements.end(),
                  [](const Announcement& announced) { return announced.needs_lock != 0; });
  const bool two_phase =
      planning.origin == PlanOrigin::compiled || planning.origin == PlanOrigin::reused;
  if (request.atomic && lock_needed && two_phase) {
    sync::ByteRange hull{std::numeric_limits<std::int64_t>::max(), 0};
    for (const core::AccessSummary& s : planning.summaries) {
      if (s.bytes == 0) continue;
      hull.begin = std::min(hull.begin, s.file_begin);
      hull.end = std::max(hull.end, s.file_end);
    }
    op.guarded([&] { planning.lease = request.atomic->lock_collective(hull, request.writing); },
               "plan");
  }
  next();
}

namespace {

// Every process made its part of an Alltoallw plan: the rounds with data
// anywhere (plan/live_round_exchange.h). Only a failed allocation or MPI
// error fails it, as the plan check, and the process's partners may then
// post rounds it does not (an MPI error is fatal in practice).
void agree_live_rounds(Operation& op, Next next) {
  Planning& planning = op.phase<Planning>();
  CollectivePlan& plan = *planning.plan;
  const std::int64_t begin = now_ns();
  std::vector<MPI_Request> counts;
  op.guarded(
      [&] {
        std::vector<std::int64_t> mine(plan.rounds.size());
        for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = plan.rounds[i].index;
        counts = planning.live_rounds.post(op.file().comm(), op.tag(MessageKind::metadata),
                                           op.file().rank(), op.file().ranks(), std::move(mine));
      },
      "plan");
  op.executor().wait_for(std::move(counts), [&op, begin, next = std::move(next)](
                                                int code, std::span<const MPI_Status>) {
    Planning& planning = op.phase<Planning>();
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("Alltoallw rounds' agreement", code)), "plan");
    }
    std::vector<MPI_Request> lists;
    op.guarded([&] { lists = planning.live_rounds.post_lists(); }, "plan");
    op.executor().wait_for(
        std::move(lists), [&op, begin, next](int code, std::span<const MPI_Status>) {
          Planning& planning = op.phase<Planning>();
          if (code != MPI_SUCCESS) {
            op.fail(std::make_exception_ptr(MpiError("Alltoallw rounds' agreement", code)), "plan");
          }
          op.guarded([&] { planning.plan->live_rounds = planning.live_rounds.merged(); }, "plan");
          if (op.failed()) {
            planning.made_everywhere = false;
            op.file().count_plan_failure();
          } else {
            planning.plan->complete = true;
          }
          op.recorder().record(Stage::realms, begin, -1, " rounds");
          next();
        });
  });
}

}  // namespace

// A compiled plan: every process learns whether every process made its
// part (plan/plan_check.h) before any data phase starts. A failed check
// fails no process by itself (the process that could not make its part
// reports its failure at the outcome agreement), marks the plan as never
// to be rerun, and counts a failure, which the next calls announce so that
// every process drops its kept plans alike.
void plan_check_stage(Operation& op, std::size_t, Next next) {
  Planning& planning = op.phase<Planning>();
  if (planning.origin != PlanOrigin::compiled) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  const bool made = !op.failed();
  const auto ranks = static_cast<std::size_t>(op.file().ranks());
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        std::vector<PlanCheck::Peer> peers(ranks);
        if (planning.descriptions_posted) {
          // Descriptions came (or notices in their place) from the
          // clients; from the others, only a notice comes.
          const std::vector<CollectiveClient>& clients = planning.plan->clients;
          for (std::size_t i = 0; i < clients.size(); ++i) {
            peers[static_cast<std::size_t>(clients[i].rank)].failed =
                !planning.metadata.description_came(i);
          }
        } else {
          // Which processes sent this one a description is not known here.
          const bool framed =
              op.request().settings->compression.mode != exchange::CompressionMode::off;
          for (std::size_t rank = 0; rank < ranks; ++rank) {
            peers[rank].room = exchange::MetadataExchange::wire_bytes(
                planning.summaries[rank].metadata_words, framed);
          }
        }
        requests = planning.check.post(op.file().comm(), op.tag(MessageKind::metadata),
                                       op.file().rank(), made, peers);
      },
      "plan");
  // Only a failed allocation or MPI error above: the check's requests are
  // then not all posted, and this process's partners may wait for its
  // notice (an MPI error is fatal in practice; see the note of issue 15).
  op.executor().wait_for(std::move(requests), [&op, begin, next = std::move(next)](
                                                  int code, std::span<const MPI_Status> statuses) {
    Planning& planning = op.phase<Planning>();
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("plan check", code)), "plan");
    }
    std::vector<MPI_Request> seconds;
    op.guarded([&] { seconds = planning.check.after_first(statuses); }, "plan");
    op.executor().wait_for(
        std::move(seconds), [&op, begin, next](int code, std::span<const MPI_Status> statuses) {
          Planning& planning = op.phase<Planning>();
          if (code != MPI_SUCCESS) {
            op.fail(std::make_exception_ptr(MpiError("plan check", code)), "plan");
          }
          if (op.failed() || !planning.check.everyone_made(statuses)) {
            planning.made_everywhere = false;
            op.file().count_plan_failure();
          } else if (!planning.plan->alltoallw) {
            planning.plan->complete = true;
          }
          op.recorder().record(Stage::realms, begin, -1, " check");
          if (planning.made_everywhere && planning.plan->alltoallw) {
            agree_live_rounds(op, next);
          } else {
            next();
          }
        });
  });
}

// What the control stages decided (alike on every process, but for direct
// mode, where each process moves its own part or has none to move): where
// no data phase can run (some process could not make its part of the plan, which
// every process knows from the plan check; the call reruns a plan that
// some process could not make, which every process knows from the check
// of the call that compiled it, whose data phase started before this one;
// or the gather settled the call or failed it everywhere), the operation
// goes straight to the agreement.
DataRoute data_route(Operation& op) {
  Planning& planning = op.phase<Planning>();
  switch (planning.origin) {
    case PlanOrigin::none:
      return DataRoute::none;
    case PlanOrigin::direct: {
      // Per process: one that failed, or moved its part at the call, has
      // nothing left to move (nobody waits for it in direct mode).
      const bool anyone = std::any_of(planning.announcements.begin(), planning.announcements.end(),
                                      [](const Announcement& a) { return a.summary.bytes > 0; });
      return anyone && !op.failed() && !planning.early.accessed ? DataRoute::direct
                                                                : DataRoute::none;
    }
    case PlanOrigin::compiled:
      return planning.made_everywhere ? DataRoute::two_phase : DataRoute::none;
    case PlanOrigin::reused:
      if (!(planning.plan && planning.plan->complete)) {
        op.fail(std::make_exception_ptr(MpiError(
                    "collective plan: an earlier call with the same accesses, whose plan this "
                    "one reuses, could not make it on every process",
                    0)),
                "plan");
        return DataRoute::none;
      }
      return DataRoute::two_phase;
  }
  return DataRoute::none;
}

DataFootprint data_footprint(Operation& op) {
  const Planning& planning = op.phase<Planning>();
  DataFootprint footprint;
  footprint.writing = op.request().writing;
  footprint.alltoallw =
      op.request().settings->alltoallw &&
      (planning.origin == PlanOrigin::compiled || planning.origin == PlanOrigin::reused);
  footprint.begin = std::numeric_limits<std::int64_t>::max();
  footprint.end = std::numeric_limits<std::int64_t>::min();
  for (const Announcement& a : planning.announcements) {
    if (a.summary.bytes == 0) continue;
    footprint.begin = std::min(footprint.begin, a.summary.file_begin);
    footprint.end = std::max(footprint.end, a.summary.file_end);
  }
  if (footprint.begin > footprint.end || planning.origin == PlanOrigin::none) {
    footprint.begin = footprint.end = 0;
  }
  return footprint;
}

}  // namespace flowio::runtime
