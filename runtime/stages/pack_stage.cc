// Pack: a client item's bytes as its message carries them: in place when
// memory is contiguous, else packed into staging; in another data
// representation, converted (convert) instead.
#include "exchange/stream_pack.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/aggregator_conversion.h"
#include "runtime/stages/converted_transfer.h"
#include "runtime/stages/recycled_buffers.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {
namespace {

// Staging is the message's room, made by a process that failed too;
// packing into it is the work.
void stage_native_bytes(Operation& op, std::size_t item) {
  Moving& moving = op.phase<Moving>();
  const ClientItemPlan& plan = moving.plan->client_items[item];
  ClientRun& run = moving.client_runs[item];
  const CollectiveRequest& request = op.request();
  if (request.memory.contiguous()) {
    run.data = reinterpret_cast<char*>(request.memory.address_of(plan.from));
    return;
  }
  const std::int64_t begin = now_ns();
  op.guarded([&] { run.staging.allocate(static_cast<std::size_t>(plan.bytes)); }, "pack");
  run.data = run.staging.data();
  if (request.writing && !op.failed()) {
    op.guarded(
        [&] { exchange::pack_stream(request.memory, plan.from, plan.bytes, run.staging.data()); },
        "pack");
    op.recorder().record(Stage::pack, begin, plan.window, "", plan.bytes);
  }
}

}  // namespace

void pack_stage(Operation& op, std::size_t item, Next next) {
  enter_stage(op, "collective.pack");
  stage_native_bytes(op, item);
  next();
}

// The client pipeline in a data representation other than native: convert
// (instead of pack) writes the item's bytes in the file's representation
// into a buffer of its own, unless its aggregator converts them
// (aggregator_conversion.h: then they go as in native).
void convert_stage(Operation& op, std::size_t item, Next next) {
  Moving& moving = op.phase<Moving>();
  const ClientItemPlan& plan = moving.plan->client_items[item];
  ClientRun& run = moving.client_runs[item];
  const CollectiveRequest& request = op.request();
  enter_stage(op, "collective.convert");
  if (request.writing &&
      aggregator_unit(moving.announcements, request, op.file().rank(), plan.from, plan.bytes) > 1) {
    stage_native_bytes(op, item);
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  op.guarded(
      [&] { run.converted = conversion_buffers().take(static_cast<std::size_t>(plan.bytes)); },
      "convert");
  if (request.writing && !op.failed()) {
    op.guarded([&] { request.conversion->pack(plan.from, plan.bytes, run.converted.data()); },
               "convert");
  }
  run.data = run.converted.data();
  if (request.writing) op.recorder().record(Stage::pack, begin, plan.window, "", plan.bytes);
  next();
}

}  // namespace flowio::runtime
