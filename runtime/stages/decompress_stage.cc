// Decompress: with framed messages, each received frame decoded in place
// if it came compressed: a read's client messages, a write's window parts.
#include <span>
#include <string>
#include <vector>

#include "exchange/compress.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

void client_decompress_stage(Operation& op, std::size_t item, Next next) {
  Moving& moving = op.phase<Moving>();
  ClientRun& run = moving.client_runs[item];
  enter_stage(op, "collective.decompress");
  if (!moving.framed || op.request().writing || run.data == nullptr || op.failed()) {
    next();
    return;
  }
  const ClientItemPlan& plan = moving.plan->client_items[item];
  const std::int64_t begin = now_ns();
  run.received = 0;
  op.guarded(
      [&] {
        run.received = static_cast<std::int64_t>(moving.compression->decode(
            run.header,
            std::span(reinterpret_cast<std::byte*>(run.data), static_cast<std::size_t>(plan.bytes)),
            static_cast<std::size_t>(run.payload_bytes), run.scratch, run.compression));
      },
      "decompress");
  op.recorder().record_compression(
      Stage::decompress, begin, plan.window, run.received,
      static_cast<std::int64_t>(exchange::kFrameHeaderBytes) + run.payload_bytes);
  next();
}

void window_decompress_stage(Operation& op, std::size_t w, Next next) {
  Moving& moving = op.phase<Moving>();
  WindowRun& run = moving.window_runs[w];
  enter_stage(op, "collective.decompress");
  if (!moving.framed || !op.request().writing || op.failed() || run.client_failed) {
    next();
    return;
  }
  const WindowPlan& plan = moving.plan->windows[w];
  const std::int64_t begin = now_ns();
  op.guarded(
      [&] {
        for (std::size_t p = 0; p < plan.parts.size(); ++p) {
          const WindowPlan::Part& part = plan.parts[p];
          const std::size_t got = moving.compression->decode(
              run.headers[p],
              std::span(reinterpret_cast<std::byte*>(run.buffer.data() + part.at),
                        static_cast<std::size_t>(part.bytes)),
              static_cast<std::size_t>(run.payload_bytes[p]), run.scratch, run.compression);
          if (static_cast<std::int64_t>(got) != part.bytes) {
            throw exchange::MalformedMessage("a client's part of " + std::to_string(got) +
                                             " bytes, " + std::to_string(part.bytes) + " expected");
          }
        }
      },
      "decompress");
  std::int64_t wire_bytes = 0;
  for (std::size_t p = 0; p < plan.parts.size(); ++p) {
    wire_bytes += static_cast<std::int64_t>(exchange::kFrameHeaderBytes) + run.payload_bytes[p];
  }
  op.recorder().record_compression(Stage::decompress, begin, plan.window.index, plan.total,
                                   wire_bytes);
  next();
}

}  // namespace flowio::runtime
