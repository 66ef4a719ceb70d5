// Alltoallw rounds: the exchange by MPI_Ialltoallw (hint flowio_exchange),
// one round per window index, every process in every round: prepare (pack
// this process's shares, or read its window), exchange, finish (write the
// window, or unpack the shares). The round pipeline is serial: rounds are
// collective calls, posted in one order everywhere.
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

// The round's buffers go once it is done with them.
void release_round(Operation& op, std::size_t r) {
  Moving& moving = op.phase<Moving>();
  const RoundPlan& plan = moving.plan->rounds[r];
  if (plan.window) moving.window_runs[*plan.window].buffer.release();
  moving.round_runs[r].client_data.release();
}

}  // namespace

// The round's buffers, made by a process that failed too (Alltoallw is
// collective: every process posts every round), then its own work: a
// write packs this process's shares, a read reads its window (on the
// executor's I/O side). The round pipeline is serial: the runner keeps
// rounds in order even when a later round, with nothing to read, is ready
// first.
void round_prepare_stage(Operation& op, std::size_t r, Next next) {
  Moving& moving = op.phase<Moving>();
  const RoundPlan& plan = moving.plan->rounds[r];
  RoundRun& run = moving.round_runs[r];
  enter_stage(op, "collective.round_prepare");
  op.guarded(
      [&] {
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
  const RoundPlan& plan = moving.plan->rounds[r];
  RoundRun& run = moving.round_runs[r];
  const bool writing = op.request().writing;
  enter_stage(op, "collective.round_exchange");
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        char* client_data = run.client_data.data();
        char* window_data = plan.window ? moving.window_runs[*plan.window].buffer.data() : nullptr;
        if (op.failed() && writing && client_data != nullptr) {
          std::fill_n(client_data, run.client_data.size(), 0);
        }
        if (op.failed() && !writing && window_data != nullptr) {
          std::fill_n(window_data, moving.window_runs[*plan.window].buffer.size(), 0);
        }
        const bool client_room = client_data != nullptr;
        const bool window_room = !plan.window || window_data != nullptr;
        const CollectivePlan& all = *moving.plan;
        const exchange::RoundLayout layout{
            client_room ? plan.client_counts : all.no_counts,
            client_room ? plan.client_displacements : all.no_displacements,
            window_room ? plan.window_counts : all.no_counts,
            window_room ? plan.window_displacements : all.no_displacements};
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
  const RoundPlan& plan = moving.plan->rounds[r];
  RoundRun& run = moving.round_runs[r];
  enter_stage(op, "collective.round_finish");
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
