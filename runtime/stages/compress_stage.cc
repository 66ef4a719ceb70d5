// Compress: with framed messages (compression not off), each message as a
// frame, compressed or raw as the rule decides (exchange/compress_stage.h):
// a write's client messages, a read's window parts.
#include <span>

#include "exchange/compress.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

void client_compress_stage(Operation& op, std::size_t item, Next next) {
  Moving& moving = op.phase<Moving>();
  ClientRun& run = moving.client_runs[item];
  enter_stage(op, "collective.compress");
  if (!moving.framed || !op.request().writing || run.data == nullptr) {
    next();
    return;
  }
  const ClientItemPlan& plan = moving.plan->client_items[item];
  const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(run.data),
                                           static_cast<std::size_t>(plan.bytes));
  // Sent raw if compressing fails: the aggregator waits for the message,
  // and the failure reaches every process through the agreement.
  run.outgoing = exchange::CompressStage::Outgoing{exchange::raw_frame_header(message.size()),
                                                   message, false, message.size()};
  if (op.failed()) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  op.guarded(
      [&] {
        run.outgoing = moving.compression->encode(plan.peer, message, run.spare,
                                                  moving.messages_sent, run.compression);
      },
      "compress");
  op.recorder().record_compression(Stage::compress, begin, plan.window, plan.bytes,
                                   static_cast<std::int64_t>(run.outgoing.frame_bytes()));
  next();
}

void window_compress_stage(Operation& op, std::size_t w, Next next) {
  Moving& moving = op.phase<Moving>();
  enter_stage(op, "collective.compress");
  if (!moving.framed || op.request().writing) {
    next();
    return;
  }
  const WindowPlan& plan = moving.plan->windows[w];
  WindowRun& run = moving.window_runs[w];
  const std::int64_t begin = now_ns();
  run.outgoing.resize(plan.parts.size());
  run.spares.resize(plan.parts.size());
  std::int64_t bytes = 0;
  for (std::size_t p = 0; p < plan.parts.size(); ++p) {
    const std::span<const std::byte> message(
        reinterpret_cast<const std::byte*>(run.buffer.data() + plan.parts[p].at),
        static_cast<std::size_t>(run.before_end[p]));
    bytes += run.before_end[p];
    // Raw if compressing fails: the client waits for the message.
    run.outgoing[p] = exchange::CompressStage::Outgoing{exchange::raw_frame_header(message.size()),
                                                        message, false, message.size()};
    if (op.failed()) continue;
    op.guarded(
        [&] {
          run.outgoing[p] =
              moving.compression->encode(moving.plan->clients[plan.parts[p].client].rank, message,
                                         run.spares[p], moving.messages_sent, run.compression);
        },
        "compress");
  }
  std::int64_t wire_bytes = 0;
  for (const exchange::CompressStage::Outgoing& frame : run.outgoing) {
    wire_bytes += static_cast<std::int64_t>(frame.frame_bytes());
  }
  op.recorder().record_compression(Stage::compress, begin, plan.window.index, bytes, wire_bytes);
  next();
}

}  // namespace flowio::runtime
