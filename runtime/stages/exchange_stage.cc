// Exchange: the point-to-point data messages between clients and
// aggregators, posted whatever happened before, so that no partner waits
// for a message that never comes.
#include <span>
#include <vector>

#include "exchange/compress.h"
#include "exchange/point_to_point.h"
#include "flowio/error.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

// A client that failed sends an empty message (its aggregator leaves the
// window unwritten) and receives what its aggregator sends (into nothing
// when it has no room for it: MPI then reports a truncation here, on the
// process that failed anyway).
void client_exchange_stage(Operation& op, std::size_t item, Next next) {
  Moving& moving = op.phase<Moving>();
  const ClientItemPlan& plan = moving.plan->client_items[item];
  ClientRun& run = moving.client_runs[item];
  const bool writing = op.request().writing;
  enter_stage(op, "collective.exchange");
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const int tag = op.tag(MessageKind::data, plan.window);
        const MPI_Comm comm = op.file().comm();
        const std::int64_t room = run.data == nullptr ? 0 : plan.bytes;
        run.sent_empty = writing && (op.failed() || run.data == nullptr);
        if (run.sent_empty && moving.framed) {
          run.outgoing =
              exchange::CompressStage::Outgoing{exchange::raw_frame_header(0), {}, false, 0};
        }
        if (!moving.framed) {
          requests.push_back(exchange::post_client_message(
              comm, writing, run.data, run.sent_empty ? 0 : room, plan.peer, tag));
        } else if (writing) {
          exchange::post_framed_send(comm, run.outgoing.header.data(), run.outgoing.payload.data(),
                                     static_cast<std::int64_t>(run.outgoing.payload.size()),
                                     plan.peer, tag, requests);
        } else {
          exchange::post_framed_receive(comm, run.header.data(), run.data, room, plan.peer, tag,
                                        requests);
        }
      },
      "exchange");
  op.executor().wait_for(std::move(requests), [&op, item, next = std::move(next)](
                                                  int code, std::span<const MPI_Status> statuses) {
    Moving& moving = op.phase<Moving>();
    const ClientItemPlan& plan = moving.plan->client_items[item];
    ClientRun& run = moving.client_runs[item];
    const bool writing = op.request().writing;
    // A read's message stops at end of file: count what came (of a frame,
    // its payload, the second message; its length is known once decoded,
    // client_decompress_stage).
    if (!writing && code == MPI_SUCCESS && !statuses.empty()) {
      MPI_Count received = 0;
      MPI_Get_count_c(&statuses.back(), MPI_BYTE, &received);
      (moving.framed ? run.payload_bytes : run.received) = received;
    }
    if (moving.framed && writing && code == MPI_SUCCESS && !run.sent_empty) {
      moving.compression->record_send(plan.peer, run.outgoing,
                                      static_cast<double>(run.posted_ns) * 1e-9,
                                      static_cast<double>(now_ns()) * 1e-9);
    }
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("data exchange", code)), "exchange");
    }
    op.recorder().record(Stage::exchange, run.posted_ns, plan.window, " client", plan.bytes, 1);
    next();
  });
}

// An aggregator that failed in a read sends its clients empty parts
// (read_window); a write's part that comes empty tells of a client that
// failed: the window is left unwritten.
void window_exchange_stage(Operation& op, std::size_t w, Next next) {
  Moving& moving = op.phase<Moving>();
  const WindowPlan& plan = moving.plan->windows[w];
  WindowRun& run = moving.window_runs[w];
  const bool writing = op.request().writing;
  enter_stage(op, "collective.exchange");
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded(
      [&] {
        const int tag = op.tag(MessageKind::data, plan.window.index);
        const MPI_Comm comm = op.file().comm();
        // No room (the buffer could not be made): nothing is received,
        // and MPI reports a truncation on this process, failed anyway.
        const bool room = run.buffer.data() != nullptr;
        if (moving.framed) {
          run.headers.resize(plan.parts.size());
          for (std::size_t p = 0; p < plan.parts.size(); ++p) {
            const int client = moving.plan->clients[plan.parts[p].client].rank;
            if (writing) {
              exchange::post_framed_receive(comm, run.headers[p].data(),
                                            room ? run.buffer.data() + plan.parts[p].at : nullptr,
                                            room ? plan.parts[p].bytes : 0, client, tag, requests);
            } else {
              const exchange::CompressStage::Outgoing& frame = run.outgoing[p];
              exchange::post_framed_send(comm, frame.header.data(), frame.payload.data(),
                                         static_cast<std::int64_t>(frame.payload.size()), client,
                                         tag, requests);
            }
          }
          return;
        }
        std::vector<exchange::WindowMessage> messages;
        for (std::size_t p = 0; p < plan.parts.size(); ++p) {
          const WindowPlan::Part& part = plan.parts[p];
          const std::int64_t bytes = writing ? part.bytes : run.before_end[p];
          messages.push_back(exchange::WindowMessage{moving.plan->clients[part.client].rank,
                                                     part.at, room ? bytes : 0});
        }
        exchange::post_window_messages(comm, writing, run.buffer.data(), messages, tag, requests);
      },
      "exchange");
  op.executor().wait_for(std::move(requests), [&op, w, next = std::move(next)](
                                                  int code, std::span<const MPI_Status> statuses) {
    Moving& moving = op.phase<Moving>();
    const WindowPlan& plan = moving.plan->windows[w];
    WindowRun& run = moving.window_runs[w];
    const bool writing = op.request().writing;
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("data exchange", code)), "exchange");
    } else if (moving.framed && writing && statuses.size() == 2 * plan.parts.size()) {
      // Each part's header, then its payload (never empty for a part with
      // data, unless its client failed).
      run.payload_bytes.assign(plan.parts.size(), 0);
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        MPI_Count received = 0;
        MPI_Get_count_c(&statuses[2 * p + 1], MPI_BYTE, &received);
        run.payload_bytes[p] = received;
        if (received == 0 && plan.parts[p].bytes > 0) run.client_failed = true;
      }
    } else if (writing && statuses.size() == plan.parts.size()) {
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        MPI_Count received = 0;
        MPI_Get_count_c(&statuses[p], MPI_BYTE, &received);
        if (received < plan.parts[p].bytes) run.client_failed = true;
      }
    } else if (moving.framed && !op.failed() && statuses.size() == 2 * plan.parts.size()) {
      const double posted = static_cast<double>(run.posted_ns) * 1e-9;
      const double completed = static_cast<double>(now_ns()) * 1e-9;
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        moving.compression->record_send(moving.plan->clients[plan.parts[p].client].rank,
                                        run.outgoing[p], posted, completed);
      }
    }
    op.recorder().record(Stage::exchange, run.posted_ns, plan.window.index, " aggregator",
                         plan.total, static_cast<std::int64_t>(plan.parts.size()));
    next();
  });
}

}  // namespace flowio::runtime
