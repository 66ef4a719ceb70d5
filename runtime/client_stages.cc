#include "runtime/client_stages.h"

#include <memory>
#include <span>
#include <vector>

#include "exchange/compress.h"
#include "exchange/compress_stage.h"
#include "exchange/point_to_point.h"
#include "exchange/stream_pack.h"
#include "flowio/error.h"
#include "runtime/aggregator_conversion.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/converted_transfer.h"
#include "runtime/executor.h"
#include "runtime/recycled_buffers.h"
#include "runtime/stage_support.h"

namespace flowio::runtime {
namespace {

// The item's bytes as memory holds them: in place when memory is
// contiguous, else packed into staging. Staging is the message's room,
// made by a process that failed too; packing into it is the work.
void stage_native_bytes(CollectiveOperation& op, std::size_t item) {
  const ClientItemPlan& plan = op.plan->client_items[item];
  ClientRun& run = op.client_runs[item];
  if (op.request.memory.contiguous()) {
    run.data = reinterpret_cast<char*>(op.request.memory.address_of(plan.from));
  } else {
    const std::int64_t begin = now_ns();
    op.guarded([&] { run.staging.allocate(static_cast<std::size_t>(plan.bytes)); }, "pack");
    run.data = run.staging.data();
    if (op.request.writing && !op.failure()) {
      op.guarded(
          [&] {
            exchange::pack_stream(op.request.memory, plan.from, plan.bytes, run.staging.data());
          },
          "pack");
      op.recorder.record(Stage::pack, begin, plan.window, "", plan.bytes);
    }
  }
}

void pack_stage(CollectiveOperation& op, std::size_t item, Next next) {
  enter_stage(op, "collective.pack");
  stage_native_bytes(op, item);
  next();
}

// Writes with framed messages: the message as a frame, compressed or raw
// as the rule decides (exchange/compress_stage.h).
void client_compress_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  enter_stage(op, "collective.compress");
  if (!op.framed || !op.request.writing || run.data == nullptr) {
    next();
    return;
  }
  const ClientItemPlan& plan = op.plan->client_items[item];
  const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(run.data),
                                           static_cast<std::size_t>(plan.bytes));
  // Sent raw if compressing fails: the aggregator waits for the message,
  // and the failure reaches every process through the agreement.
  run.outgoing = exchange::CompressStage::Outgoing{exchange::raw_frame_header(message.size()),
                                                   message, false, message.size()};
  if (op.failure()) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  op.guarded(
      [&] {
        run.outgoing = op.compression->encode(plan.peer, message, run.spare, op.messages_sent,
                                              run.compression);
      },
      "compress");
  op.recorder.record_compression(Stage::compress, begin, plan.window, plan.bytes,
                                 static_cast<std::int64_t>(run.outgoing.frame_bytes()));
  next();
}

// The client pipeline in a data representation other than native: convert
// (instead of pack) writes the item's bytes in the file's representation
// into a buffer of its own, unless its aggregator converts them
// (aggregator_conversion.h: then they go as in native); convert back
// (instead of unpack) stores what a read received into memory, converted.
void convert_stage(CollectiveOperation& op, std::size_t item, Next next) {
  const ClientItemPlan& plan = op.plan->client_items[item];
  ClientRun& run = op.client_runs[item];
  enter_stage(op, "collective.convert");
  if (op.request.writing && aggregator_unit(op, op.context.rank(), plan.from, plan.bytes) > 1) {
    stage_native_bytes(op, item);
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  op.guarded(
      [&] { run.converted = conversion_buffers().take(static_cast<std::size_t>(plan.bytes)); },
      "convert");
  if (op.request.writing && !op.failure()) {
    op.guarded([&] { op.request.conversion->pack(plan.from, plan.bytes, run.converted.data()); },
               "convert");
  }
  run.data = run.converted.data();
  if (op.request.writing) op.recorder.record(Stage::pack, begin, plan.window, "", plan.bytes);
  next();
}

void convert_back_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  enter_stage(op, "collective.convert_back");
  if (!op.request.writing && run.converted && !op.failure()) {
    const ClientItemPlan& plan = op.plan->client_items[item];
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] { op.request.conversion->unpack(plan.from, run.received, run.converted.data()); },
        "convert_back");
    op.recorder.record(Stage::unpack, begin, plan.window, "", run.received);
  }
  run.converted.give_back();
  run.staging.release();
  next();
}

// Posted whatever happened before: a process that failed sends an empty
// message (its aggregator leaves the window unwritten) and receives what
// its aggregator sends (into nothing when it has no room for it: MPI
// then reports a truncation here, on the process that failed anyway).
void client_exchange_stage(CollectiveOperation& op, std::size_t item, Next next) {
  const ClientItemPlan& plan = op.plan->client_items[item];
  ClientRun& run = op.client_runs[item];
  enter_stage(op, "collective.exchange");
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const int tag = data_tag(op, plan.window);
        const std::int64_t room = run.data == nullptr ? 0 : plan.bytes;
        run.sent_empty = op.request.writing && (op.failure() || run.data == nullptr);
        if (run.sent_empty && op.framed) {
          run.outgoing =
              exchange::CompressStage::Outgoing{exchange::raw_frame_header(0), {}, false, 0};
        }
        if (!op.framed) {
          requests.push_back(exchange::post_client_message(op.context.comm(), op.request.writing,
                                                           run.data, run.sent_empty ? 0 : room,
                                                           plan.peer, tag));
        } else if (op.request.writing) {
          exchange::post_framed_send(
              op.context.comm(), run.outgoing.header.data(), run.outgoing.payload.data(),
              static_cast<std::int64_t>(run.outgoing.payload.size()), plan.peer, tag, requests);
        } else {
          exchange::post_framed_receive(op.context.comm(), run.header.data(), run.data, room,
                                        plan.peer, tag, requests);
        }
      },
      "exchange");
  op.executor->wait_for(std::move(requests), [&op, item, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    const ClientItemPlan& plan = op.plan->client_items[item];
    ClientRun& run = op.client_runs[item];
    // A read's message stops at end of file: count what came (of a frame,
    // its payload, the second message; its length is known once decoded,
    // client_decompress_stage).
    if (!op.request.writing && code == MPI_SUCCESS && !statuses.empty()) {
      MPI_Count received = 0;
      MPI_Get_count_c(&statuses.back(), MPI_BYTE, &received);
      (op.framed ? run.payload_bytes : run.received) = received;
    }
    if (op.framed && op.request.writing && code == MPI_SUCCESS && !run.sent_empty) {
      op.compression->record_send(plan.peer, run.outgoing,
                                  static_cast<double>(run.posted_ns) * 1e-9,
                                  static_cast<double>(now_ns()) * 1e-9);
    }
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("data exchange", code)), "exchange");
    }
    op.recorder.record(Stage::exchange, run.posted_ns, plan.window, " client", plan.bytes, 1);
    next();
  });
}

// Reads with framed messages: the message in place, decoded if it came
// compressed.
void client_decompress_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  enter_stage(op, "collective.decompress");
  if (!op.framed || op.request.writing || run.data == nullptr || op.failure()) {
    next();
    return;
  }
  const ClientItemPlan& plan = op.plan->client_items[item];
  const std::int64_t begin = now_ns();
  run.received = 0;
  op.guarded(
      [&] {
        run.received = static_cast<std::int64_t>(op.compression->decode(
            run.header,
            std::span(reinterpret_cast<std::byte*>(run.data), static_cast<std::size_t>(plan.bytes)),
            static_cast<std::size_t>(run.payload_bytes), run.scratch, run.compression));
      },
      "decompress");
  op.recorder.record_compression(
      Stage::decompress, begin, plan.window, run.received,
      static_cast<std::int64_t>(exchange::kFrameHeaderBytes) + run.payload_bytes);
  next();
}

void unpack_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  enter_stage(op, "collective.unpack");
  if (op.framed) {
    op.add_compression(run.compression);
    std::vector<std::byte>().swap(run.spare);
    std::vector<std::byte>().swap(run.scratch);
  }
  if (!op.request.writing && !run.staging.empty() && !op.failure()) {
    const ClientItemPlan& plan = op.plan->client_items[item];
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] {
          exchange::unpack_stream(op.request.memory, plan.from, run.received, run.staging.data());
        },
        "unpack");
    op.recorder.record(Stage::unpack, begin, plan.window, "", run.received);
  }
  run.staging.release();
  next();
}

}  // namespace

const Pipeline& client_pipeline() {
  static const Pipeline kClient{"client",
                                {pack_stage, client_compress_stage, client_exchange_stage,
                                 client_decompress_stage, unpack_stage},
                                false,
                                leave_item};
  return kClient;
}

const Pipeline& client_converted_pipeline() {
  static const Pipeline kClientConverted{
      "client",
      {convert_stage, client_compress_stage, client_exchange_stage, client_decompress_stage,
       convert_back_stage},
      false,
      leave_item};
  return kClientConverted;
}

}  // namespace flowio::runtime
