// Alltoallw rounds: the exchange by MPI_Ialltoallw (hint flowio_exchange),
// one round per window index with data anywhere, every process in every
// such round (plan/live_round_exchange.h): prepare (pack this process's
// shares, or read its window), exchange, finish (write the window, or
// unpack the shares). The round pipeline is serial: rounds are collective
// calls, posted in one order everywhere.
#include <algorithm>
#include <vector>

#include "exchange/alltoallw.h"
#include "flowio/error.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"
#include "runtime/stages/window_access.h"

namespace flowio::runtime {
namespace {

// This process's part of live round r, if it has one.
const RoundPlan* part_of_round(const CollectivePlan& plan, std::size_t r) {
  const std::int64_t index = plan.live_rounds[r];
  const auto found = std::lower_bound(
      plan.rounds.begin(), plan.rounds.end(), index,
      [](const RoundPlan& round, std::int64_t wanted) { return round.index < wanted; });
  return found != plan.rounds.end() && found->index == index ? &*found : nullptr;
}

// The round's counts and displacements by rank: its shares as a client,
// its window's parts as an aggregator.
void lay_out_round(const CollectivePlan& plan, const RoundPlan& part, RoundRun& run) {
  const std::size_t ranks = plan.no_counts.size();
  run.client_counts.assign(ranks, 0);
  run.client_displacements.assign(ranks, 0);
  std::int64_t at = 0;
  for (const RoundPlan::Share& share : part.shares) {
    run.client_counts[static_cast<std::size_t>(share.peer)] = share.bytes;
    run.client_displacements[static_cast<std::size_t>(share.peer)] = at;
    at += share.bytes;
  }
  if (!part.window) return;
  run.window_counts.assign(ranks, 0);
  run.window_displacements.assign(ranks, 0);
  for (const WindowPlan::Part& window_part : plan.windows[*part.window].parts) {
    const auto peer = static_cast<std::size_t>(plan.clients[window_part.client].rank);
    run.window_counts[peer] = window_part.bytes;
    run.window_displacements[peer] = window_part.at;
  }
}

// The round's buffers and counts go once it is done with them.
void release_round(Operation& op, std::size_t r) {
  Moving& moving = op.phase<Moving>();
  RoundRun& run = moving.round_runs[r];
  if (run.part != nullptr && run.part->window) {
    moving.window_runs[*run.part->window].buffer.release();
  }
  run = RoundRun{};
}

}  // namespace

// The round's part here (none: this process posts the round with
// nothing), its buffers, made by a process that failed too (Alltoallw is
// collective: every process posts every live round), then its own work: a
// write packs this process's shares, a read reads its window (on the
// executor's I/O side). The round pipeline is serial: the runner keeps
// rounds in order even when a later round, with nothing to read, is ready
// first.
void round_prepare_stage(Operation& op, std::size_t r, Next next) {
  Moving& moving = op.phase<Moving>();
  RoundRun& run = moving.round_runs[r];
  enter_stage(op, "collective.round_prepare");
  run.part = part_of_round(*moving.plan, r);
  if (run.part == nullptr) {
    next();
    return;
  }
  const RoundPlan& plan = *run.part;
  op.guarded(
      [&] {
        lay_out_round(*moving.plan, plan, run);
        run.client_data.allocate(static_cast<std::size_t>(plan.share_bytes));
        if (plan.window) {
          moving.window_runs[*plan.window].buffer.allocate(
              static_cast<std::size_t>(moving.plan->windows[*plan.window].total));
        }
      },
      "round_prepare");
  if (plan.window && !op.request().writing) {
    op.executor().run_io([&op, w = *plan.window, next = std::move(next)] {
      read_window(op, w);
      next();
    });
    return;
  }
  if (op.request().writing && !op.failed()) {
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] {
          std::int64_t at = 0;
          for (const RoundPlan::Share& share : plan.shares) {
            pack_for_file(op, share.from, share.bytes, run.client_data.data() + at);
            at += share.bytes;
          }
        },
        "round_prepare");
    op.recorder().record(Stage::pack, begin, static_cast<std::int64_t>(r), "", plan.share_bytes);
  }
  next();
}

// Posted by every process, failed or not. A write of a process that
// failed sends zeros (never bytes it did not pack or read): its partners
// cannot tell them from data, and the operation fails everywhere through
// the agreement. A buffer that could not be made takes part with nothing:
// the truncation MPI reports is this process's, failed anyway.
void round_exchange_stage(Operation& op, std::size_t r, Next next) {
  Moving& moving = op.phase<Moving>();
  RoundRun& run = moving.round_runs[r];
  const RoundPlan* plan = run.part;
  const bool writing = op.request().writing;
  enter_stage(op, "collective.round_exchange");
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const bool window = plan != nullptr && plan->window;
        char* client_data = run.client_data.data();
        char* window_data = window ? moving.window_runs[*plan->window].buffer.data() : nullptr;
        if (op.failed() && writing && client_data != nullptr) {
          std::fill_n(client_data, run.client_data.size(), 0);
        }
        if (op.failed() && !writing && window_data != nullptr) {
          std::fill_n(window_data, moving.window_runs[*plan->window].buffer.size(), 0);
        }
        const bool client_room =
            client_data != nullptr && run.client_counts.size() == moving.plan->no_counts.size();
        const bool window_room =
            window_data != nullptr && run.window_counts.size() == moving.plan->no_counts.size();
        const CollectivePlan& all = *moving.plan;
        const exchange::RoundLayout layout{
            client_room ? run.client_counts : all.no_counts,
            client_room ? run.client_displacements : all.no_displacements,
            window_room ? run.window_counts : all.no_counts,
            window_room ? run.window_displacements : all.no_displacements};
        requests.push_back(exchange::post_round(op.file().comm(), writing, client_data, window_data,
                                                layout, op.file().byte_types()));
      },
      "round_exchange");
  op.executor().wait_for(
      std::move(requests), [&op, r, next = std::move(next)](int code, std::span<const MPI_Status>) {
        if (code != MPI_SUCCESS) {
          op.fail(std::make_exception_ptr(MpiError("MPI_Ialltoallw_c", code)), "round_exchange");
        }
        op.recorder().record(Stage::exchange, op.phase<Moving>().round_runs[r].posted_ns,
                             static_cast<std::int64_t>(r), " alltoallw");
        next();
      });
}

// A write writes the window (on the executor's I/O side), a read unpacks
// this process's shares.
void round_finish_stage(Operation& op, std::size_t r, Next next) {
  Moving& moving = op.phase<Moving>();
  RoundRun& run = moving.round_runs[r];
  enter_stage(op, "collective.round_finish");
  if (run.part == nullptr) {
    release_round(op, r);
    next();
    return;
  }
  const RoundPlan& plan = *run.part;
  if (plan.window && op.request().writing) {
    op.executor().run_io([&op, r, w = *plan.window, next = std::move(next)] {
      write_window(op, w);
      release_round(op, r);
      next();
    });
    return;
  }
  if (!op.request().writing && !op.failed()) {
    const std::int64_t begin = now_ns();
    std::int64_t at = 0;
    op.guarded(
        [&] {
          // What lies past end of file is not unpacked: the memory there
          // stays as it was, as after an independent read.
          const std::int64_t valid = op.request().access.bytes_before(op.file().file().size());
          for (const RoundPlan::Share& share : plan.shares) {
            const std::int64_t bytes = std::clamp<std::int64_t>(valid - share.from, 0, share.bytes);
            unpack_from_file(op, share.from, bytes, run.client_data.data() + at);
            at += share.bytes;
          }
        },
        "round_finish");
    op.recorder().record(Stage::unpack, begin, static_cast<std::int64_t>(r), "", at);
  }
  release_round(op, r);
  next();
}

}  // namespace flowio::runtime
