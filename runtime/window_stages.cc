#include "runtime/window_stages.h"

#include <span>
#include <string>
#include <vector>

#include "exchange/compress.h"
#include "exchange/compress_stage.h"
#include "exchange/point_to_point.h"
#include "flowio/error.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/executor.h"
#include "runtime/stage_support.h"
#include "runtime/window_access.h"

namespace flowio::runtime {
namespace {

// The window's buffer, made by an aggregator that failed too (its clients'
// messages need somewhere to go), then, for reads, the window from the
// file (on the executor's I/O side).
void window_read_stage(CollectiveOperation& op, std::size_t w, Next next) {
  enter_stage(op, "collective.window_read");
  op.guarded(
      [&] {
        op.window_runs[w].buffer.allocate(static_cast<std::size_t>(op.plan->windows[w].total));
      },
      "window_read");
  if (op.request.writing) {
    next();
    return;
  }
  op.executor->run_io([&op, w, next = std::move(next)] {
    read_window(op, w);
    next();
  });
}

// Reads with framed messages: each client's part as a frame, compressed
// or raw as the rule decides (exchange/compress_stage.h).
void window_compress_stage(CollectiveOperation& op, std::size_t w, Next next) {
  enter_stage(op, "collective.compress");
  if (!op.framed || op.request.writing) {
    next();
    return;
  }
  const WindowPlan& plan = op.plan->windows[w];
  WindowRun& run = op.window_runs[w];
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
    if (op.failure()) continue;
    op.guarded(
        [&] {
          run.outgoing[p] =
              op.compression->encode(op.plan->clients[plan.parts[p].client].rank, message,
                                     run.spares[p], op.messages_sent, run.compression);
        },
        "compress");
  }
  std::int64_t wire_bytes = 0;
  for (const exchange::CompressStage::Outgoing& frame : run.outgoing) {
    wire_bytes += static_cast<std::int64_t>(frame.frame_bytes());
  }
  op.recorder.record_compression(Stage::compress, begin, plan.window.index, bytes, wire_bytes);
  next();
}

// Posted whatever happened before (reads: an aggregator that failed sends
// its clients empty parts, read_window). A write's part that comes empty
// tells of a client that failed: the window is left unwritten.
void window_exchange_stage(CollectiveOperation& op, std::size_t w, Next next) {
  const WindowPlan& plan = op.plan->windows[w];
  WindowRun& run = op.window_runs[w];
  enter_stage(op, "collective.exchange");
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const int tag = data_tag(op, plan.window.index);
        // No room (the buffer could not be made): nothing is received,
        // and MPI reports a truncation on this process, failed anyway.
        const bool room = run.buffer.data() != nullptr;
        if (op.framed) {
          run.headers.resize(plan.parts.size());
          for (std::size_t p = 0; p < plan.parts.size(); ++p) {
            const int client = op.plan->clients[plan.parts[p].client].rank;
            if (op.request.writing) {
              exchange::post_framed_receive(op.context.comm(), run.headers[p].data(),
                                            room ? run.buffer.data() + plan.parts[p].at : nullptr,
                                            room ? plan.parts[p].bytes : 0, client, tag, requests);
            } else {
              const exchange::CompressStage::Outgoing& frame = run.outgoing[p];
              exchange::post_framed_send(
                  op.context.comm(), frame.header.data(), frame.payload.data(),
                  static_cast<std::int64_t>(frame.payload.size()), client, tag, requests);
            }
          }
          return;
        }
        std::vector<exchange::WindowMessage> messages;
        for (std::size_t p = 0; p < plan.parts.size(); ++p) {
          const WindowPlan::Part& part = plan.parts[p];
          const std::int64_t bytes = op.request.writing ? part.bytes : run.before_end[p];
          messages.push_back(exchange::WindowMessage{op.plan->clients[part.client].rank, part.at,
                                                     room ? bytes : 0});
        }
        exchange::post_window_messages(op.context.comm(), op.request.writing, run.buffer.data(),
                                       messages, tag, requests);
      },
      "exchange");
  op.executor->wait_for(std::move(requests), [&op, w, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    const WindowPlan& plan = op.plan->windows[w];
    WindowRun& run = op.window_runs[w];
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("data exchange", code)), "exchange");
    } else if (op.framed && op.request.writing && statuses.size() == 2 * plan.parts.size()) {
      // Each part's header, then its payload (never empty for a part with
      // data, unless its client failed).
      run.payload_bytes.assign(plan.parts.size(), 0);
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        MPI_Count received = 0;
        MPI_Get_count_c(&statuses[2 * p + 1], MPI_BYTE, &received);
        run.payload_bytes[p] = received;
        if (received == 0 && plan.parts[p].bytes > 0) run.client_failed = true;
      }
    } else if (op.request.writing && statuses.size() == plan.parts.size()) {
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        MPI_Count received = 0;
        MPI_Get_count_c(&statuses[p], MPI_BYTE, &received);
        if (received < plan.parts[p].bytes) run.client_failed = true;
      }
    } else if (op.framed && !op.failure() && statuses.size() == 2 * plan.parts.size()) {
      const double posted = static_cast<double>(run.posted_ns) * 1e-9;
      const double completed = static_cast<double>(now_ns()) * 1e-9;
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        op.compression->record_send(op.plan->clients[plan.parts[p].client].rank, run.outgoing[p],
                                    posted, completed);
      }
    }
    op.recorder.record(Stage::exchange, run.posted_ns, plan.window.index, " aggregator", plan.total,
                       static_cast<std::int64_t>(plan.parts.size()));
    next();
  });
}

// Writes with framed messages: each client's part in place in the window
// buffer, decoded if it came compressed.
void window_decompress_stage(CollectiveOperation& op, std::size_t w, Next next) {
  WindowRun& run = op.window_runs[w];
  enter_stage(op, "collective.decompress");
  if (!op.framed || !op.request.writing || op.failure() || run.client_failed) {
    next();
    return;
  }
  const WindowPlan& plan = op.plan->windows[w];
  const std::int64_t begin = now_ns();
  op.guarded(
      [&] {
        for (std::size_t p = 0; p < plan.parts.size(); ++p) {
          const WindowPlan::Part& part = plan.parts[p];
          const std::size_t got = op.compression->decode(
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
  op.recorder.record_compression(Stage::decompress, begin, plan.window.index, plan.total,
                                 wire_bytes);
  next();
}

// The window's framed messages are done: their statistics go to the
// operation, their buffers away.
void finish_window_frames(CollectiveOperation& op, WindowRun& run) {
  if (!op.framed) return;
  op.add_compression(run.compression);
  run.outgoing.clear();
  std::vector<std::vector<std::byte>>().swap(run.spares);
  std::vector<std::byte>().swap(run.scratch);
}

// Writes: the window to the file (on the executor's I/O side).
void window_write_stage(CollectiveOperation& op, std::size_t w, Next next) {
  enter_stage(op, "collective.window_write");
  finish_window_frames(op, op.window_runs[w]);
  if (!op.request.writing) {
    op.window_runs[w].buffer.release();
    next();
    return;
  }
  op.executor->run_io([&op, w, next = std::move(next)] {
    write_window(op, w);
    op.window_runs[w].buffer.release();
    next();
  });
}

}  // namespace

const Pipeline& window_pipeline() {
  static const Pipeline kWindow{"window",
                                {window_read_stage, window_compress_stage, window_exchange_stage,
                                 window_decompress_stage, window_write_stage},
                                false,
                                leave_item};
  return kWindow;
}

}  // namespace flowio::runtime
