#include "runtime/round_stages.h"

#include <algorithm>
#include <vector>

#include "exchange/alltoallw.h"
#include "flowio/error.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/executor.h"
#include "runtime/stage_support.h"
#include "runtime/window_access.h"

namespace flowio::runtime {
namespace {

void round_prepare_stage(CollectiveOperation& op, std::size_t r, Next next) {
  const RoundPlan& plan = op.plan->rounds[r];
  RoundRun& run = op.round_runs[r];
  run.client_data.allocate(static_cast<std::size_t>(plan.share_bytes));
  if (plan.window) {
    op.window_runs[*plan.window].buffer.allocate(
        static_cast<std::size_t>(op.plan->windows[*plan.window].total));
    if (!op.request.writing) read_window(op, *plan.window);
  }
  if (op.request.writing) {
    const std::int64_t begin = now_ns();
    op.guarded([&] {
      std::int64_t at = 0;
      for (const RoundPlan::Share& share : plan.shares) {
        pack_for_file(op, share.from, share.bytes, run.client_data.data() + at);
        at += share.bytes;
      }
    });
    op.recorder.record(Stage::pack, begin, static_cast<std::int64_t>(r), "", plan.share_bytes);
  }
  next();
}

void round_exchange_stage(CollectiveOperation& op, std::size_t r, Next next) {
  const RoundPlan& plan = op.plan->rounds[r];
  RoundRun& run = op.round_runs[r];
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded([&] {
    char* window_data = plan.window ? op.window_runs[*plan.window].buffer.data() : nullptr;
    const exchange::RoundLayout layout{plan.client_counts, plan.client_displacements,
                                       plan.window_counts, plan.window_displacements};
    requests.push_back(exchange::post_round(op.context.comm(), op.request.writing,
                                            run.client_data.data(), window_data, layout,
                                            op.context.byte_types()));
  });
  op.executor->wait_for(std::move(requests),
                        [&op, r, next = std::move(next)](int code, std::span<const MPI_Status>) {
                          if (code != MPI_SUCCESS) {
                            op.fail(std::make_exception_ptr(MpiError("MPI_Ialltoallw", code)));
                          }
                          op.recorder.record(Stage::exchange, op.round_runs[r].posted_ns,
                                             static_cast<std::int64_t>(r), " alltoallw");
                          next();
                        });
}

void round_finish_stage(CollectiveOperation& op, std::size_t r, Next next) {
  const RoundPlan& plan = op.plan->rounds[r];
  RoundRun& run = op.round_runs[r];
  if (plan.window && op.request.writing) write_window(op, *plan.window);
  if (!op.request.writing) {
    const std::int64_t begin = now_ns();
    std::int64_t at = 0;
    op.guarded([&] {
      // What lies past end of file is not unpacked: the memory there stays
      // as it was, as after an independent read.
      const std::int64_t valid = op.request.access.bytes_before(op.context.file().size());
      for (const RoundPlan::Share& share : plan.shares) {
        const std::int64_t bytes = std::clamp<std::int64_t>(valid - share.from, 0, share.bytes);
        unpack_from_file(op, share.from, bytes, run.client_data.data() + at);
        at += share.bytes;
      }
    });
    op.recorder.record(Stage::unpack, begin, static_cast<std::int64_t>(r), "", at);
  }
  if (plan.window) op.window_runs[*plan.window].buffer.release();
  run.client_data.release();
  next();
}

}  // namespace

const Pipeline& round_pipeline() {
  static const Pipeline kRound{
      "round", {round_prepare_stage, round_exchange_stage, round_finish_stage}, true, leave_item};
  return kRound;
}

}  // namespace flowio::runtime
