// Unpack: what a read's message brought, into memory (convert back, in
// another data representation); and the end of a client item, whose
// buffers go.
#include <vector>

#include "exchange/stream_pack.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

void unpack_stage(Operation& op, std::size_t item, Next next) {
  Moving& moving = op.phase<Moving>();
  ClientRun& run = moving.client_runs[item];
  enter_stage(op, "collective.unpack");
  if (moving.framed) {
    op.add_compression(run.compression);
    std::vector<std::byte>().swap(run.spare);
    std::vector<std::byte>().swap(run.scratch);
  }
  if (!op.request().writing && !run.staging.empty() && !op.failed()) {
    const ClientItemPlan& plan = moving.plan->client_items[item];
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] {
          exchange::unpack_stream(op.request().memory, plan.from, run.received, run.staging.data());
        },
        "unpack");
    op.recorder().record(Stage::unpack, begin, plan.window, "", run.received);
  }
  run.staging.release();
  next();
}

// Stores what a read received into memory, converted to the memory's
// representation.
void convert_back_stage(Operation& op, std::size_t item, Next next) {
  Moving& moving = op.phase<Moving>();
  ClientRun& run = moving.client_runs[item];
  enter_stage(op, "collective.convert_back");
  if (!op.request().writing && run.converted && !op.failed()) {
    const ClientItemPlan& plan = moving.plan->client_items[item];
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] { op.request().conversion->unpack(plan.from, run.received, run.converted.data()); },
        "convert_back");
    op.recorder().record(Stage::unpack, begin, plan.window, "", run.received);
  }
  run.converted.give_back();
  run.staging.release();
  next();
}

}  // namespace flowio::runtime
