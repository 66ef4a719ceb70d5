#include "runtime/collective_stages.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "exchange/access_codec.h"
#include "exchange/alltoallw.h"
#include "exchange/compress.h"
#include "exchange/compress_stage.h"
#include "exchange/point_to_point.h"
#include "exchange/stream_pack.h"
#include "flowio/error.h"
#include "io/view_transfer.h"
#include "io/window_io.h"
#include "runtime/clock.h"
#include "runtime/collective_context.h"
#include "runtime/collective_operation.h"
#include "runtime/converted_transfer.h"
#include "runtime/executor.h"
#include "runtime/graph_runner.h"
#include "runtime/inline_graph_runner.h"
#include "runtime/message_tags.h"
#include "runtime/plan_compiler.h"

namespace flowio::runtime {
namespace {

// Plans of calls whose processes together have more pieces than this are
// not kept: their window lists would hold too much memory for what a rerun
// saves. Decided from the gathered summaries, the same on every process.
constexpr std::int64_t kMostPiecesKept = std::int64_t{1} << 20;

int data_tag(const CollectiveOperation& op, std::int64_t window) {
  return message_tag(MessageKind::data, op.sequence, window);
}

// --- data representation (issue 16) ---
// Everything here counts bytes of the process's stream as it lies in the
// file. Natively that is its memory's data, packed; in another data
// representation (a view in external32, or a user one) the request carries
// a conversion, and packing converts from memory, unpacking converts into
// it, one buffer iteration at a time.

void pack_for_file(CollectiveOperation& op, std::int64_t from, std::int64_t bytes,
                   char* destination) {
  if (op.request.conversion) {
    op.request.conversion->pack(from, bytes, destination);
  } else {
    exchange::pack_stream(op.request.memory, from, bytes, destination);
  }
}

void unpack_from_file(CollectiveOperation& op, std::int64_t from, std::int64_t bytes,
                      const char* source) {
  if (op.request.conversion) {
    op.request.conversion->unpack(from, bytes, source);
  } else {
    exchange::unpack_stream(op.request.memory, from, bytes, source);
  }
}

bool anyone_failed_early(const CollectiveOperation& op) {
  return std::any_of(op.announcements.begin(), op.announcements.end(),
                     [](const Announcement& a) { return a.failed_early != 0; });
}

// Whether this operation's point-to-point messages are framed
// (compression not off); the first call begins its stage of the file's
// compression rule. Control and data stages of one operation call it in
// turn, never at once.
bool begin_compression(CollectiveOperation& op) {
  if (op.request.settings->compression.mode == exchange::CompressionMode::off) return false;
  if (!op.compression) {
    op.compression_rule = op.context.compression_rule(op.request.settings->compression);
    op.compression.emplace(*op.compression_rule);
  }
  return true;
}

// --- control ---

// Realm calc, or the plan kept from an earlier call with the same
// accesses. Runs in call order on every process (a serial stage entered
// through the CallOrderGate), so every process's cache gives the same
// answer.
void realms_stage(CollectiveOperation& op, std::size_t, Next next) {
  const std::int64_t begin = now_ns();
  if (op.told_by_gather || op.failure() || anyone_failed_early(op)) {
    next();
    return;
  }
  const CollectiveSettings& settings = *op.request.settings;
  op.guarded([&] {
    if (!decide_two_phase(op.summaries, settings)) {
      op.plan = std::make_shared<CollectivePlan>();
      op.plan->complete = true;
      return;
    }
    CollectiveContext& context = op.context;
    std::vector<std::uint64_t> keys;
    std::int64_t pieces = 0;
    for (const Announcement& a : op.announcements) {
      keys.push_back(a.plan_key);
      pieces += a.summary.pieces;
    }
    const std::uint64_t key = PlanCache::combine(keys);
    if (std::shared_ptr<CollectivePlan> kept = context.plans().find(key)) {
      op.plan = std::move(kept);
      op.plan_reused = true;
      return;
    }
    op.plan = std::make_shared<CollectivePlan>();
    plan_realms_step(settings, op.summaries, context.rank(), context.persistent_unit(), *op.plan);
    if (pieces <= kMostPiecesKept) context.plans().insert(key, op.plan);
  });
  op.recorder.record(Stage::realms, begin);
  next();
}

// Metadata transfer: clients describe their accesses to the aggregators
// whose realms they meet.
void metadata_stage(CollectiveOperation& op, std::size_t, Next next) {
  const bool compiling = op.plan && op.plan->two_phase && !op.plan_reused && !op.failure();
  if (!compiling) {
    next();
    return;
  }
  const std::int64_t begin = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded([&] {
    const CollectivePlan& plan = *op.plan;
    std::vector<int> client_ranks;
    std::vector<std::int64_t> client_words;
    for (const CollectiveClient& client : plan.clients) {
      client_ranks.push_back(client.rank);
      client_words.push_back(op.summaries[static_cast<std::size_t>(client.rank)].metadata_words);
    }
    requests = op.metadata.post(
        op.context.comm(), message_tag(MessageKind::metadata, op.sequence), op.request.access,
        op.view_words, *plan.layout, op.request.settings->aggregator_ranks, plan.slot, client_ranks,
        client_words, begin_compression(op) ? &*op.compression : nullptr, op.metadata_compression);
  });
  op.executor->wait_for(std::move(requests), [&op, begin, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("metadata exchange", code)));
    } else {
      op.metadata.received(statuses);
    }
    op.recorder.record(Stage::metadata, begin, -1, "", 0, op.metadata.messages());
    next();
  });
}

// The rest of the plan (items, windows, rounds), then the operation waits
// for the scheduler to start its data phase.
void plan_stage(CollectiveOperation& op, std::size_t, Next next) {
  if (op.plan && op.plan->two_phase && !op.plan_reused && !op.failure()) {
    const std::int64_t begin = now_ns();
    op.guarded([&] {
      CollectivePlan& plan = *op.plan;
      std::vector<core::Access> accesses = op.metadata.decode();
      op.add_compression(op.metadata_compression);
      for (std::size_t i = 0; i < plan.clients.size(); ++i) {
        plan.clients[i].access = std::move(accesses[i]);
      }
      plan_items_step(*op.request.settings, op.request.access, op.context.ranks(), plan);
      plan.complete = true;
    });
    op.view_words.clear();
    op.recorder.record(Stage::realms, begin, -1, " items");
  }
  // Atomic mode: every process asks in call order (this stage is serial);
  // the leader takes one lease over every process's access for all. Not
  // when every access touches only objects private to its process: no
  // other access can conflict with any of them.
  const bool lock_needed =
      std::any_of(op.announcements.begin(), op.announcements.end(),
                  [](const Announcement& announced) { return announced.needs_lock != 0; });
  if (op.request.atomic && lock_needed && op.plan && op.plan->two_phase && !op.told_by_gather &&
      !anyone_failed_early(op)) {
    sync::ByteRange hull{std::numeric_limits<std::int64_t>::max(), 0};
    for (const core::AccessSummary& s : op.summaries) {
      if (s.bytes == 0) continue;
      hull.begin = std::min(hull.begin, s.file_begin);
      hull.end = std::max(hull.end, s.file_end);
    }
    op.guarded(
        [&] { op.atomic_pending = op.request.atomic->lock_collective(hull, op.request.writing); });
  }
  next();
}

// Atomic mode: runs `then` once the operation holds the lease it asked for
// (at once when it asked for none). Inline, the caller waits for it here;
// in the background the lease's continuation, on the progress thread, runs
// `then`, which only hands work on (no worker waits for a lock).
void after_atomic_lease(CollectiveOperation& op, std::function<void()> then) {
  if (!op.atomic_pending.valid()) {
    then();
    return;
  }
  if (dynamic_cast<InlineGraphRunner*>(op.runner) != nullptr) {
    op.guarded([&] { op.atomic_lease = op.atomic_pending.get(); });
    then();
    return;
  }
  op.atomic_pending.then([&op, then = std::move(then)](Future<sync::Lease> held) {
    op.guarded([&] { op.atomic_lease = held.get(); });
    then();
  });
}

// Leaving the control pipeline: the operation waits for the scheduler to
// start its data phase (at once, unless an earlier operation it could
// interfere with is still running). Nothing touches the operation after
// this: it may run to completion from here.
void leave_control(CollectiveOperation& op) {
  DataFootprint footprint;
  if (!op.told_by_gather) {
    footprint.writing = op.request.writing;
    footprint.alltoallw = op.request.settings->alltoallw && op.plan && op.plan->two_phase;
    footprint.begin = std::numeric_limits<std::int64_t>::max();
    footprint.end = std::numeric_limits<std::int64_t>::min();
    for (const core::AccessSummary& s : op.summaries) {
      if (s.bytes == 0) continue;
      footprint.begin = std::min(footprint.begin, s.file_begin);
      footprint.end = std::max(footprint.end, s.file_end);
    }
    if (footprint.begin > footprint.end) footprint.begin = footprint.end = 0;
  }
  op.context.scheduler().ready(op.sequence, footprint, [&op] { start_data_phase(op); });
}

// --- client items ---

void pack_stage(CollectiveOperation& op, std::size_t item, Next next) {
  const ClientItemPlan& plan = op.plan->client_items[item];
  ClientRun& run = op.client_runs[item];
  if (op.request.memory.contiguous()) {
    run.data = reinterpret_cast<char*>(op.request.memory.address_of(plan.from));
  } else {
    const std::int64_t begin = now_ns();
    op.guarded([&] {
      run.staging.allocate(static_cast<std::size_t>(plan.bytes));
      if (op.request.writing) {
        exchange::pack_stream(op.request.memory, plan.from, plan.bytes, run.staging.data());
      }
    });
    run.data = run.staging.data();
    if (op.request.writing) op.recorder.record(Stage::pack, begin, plan.window, "", plan.bytes);
  }
  next();
}

// Writes with framed messages: the message as a frame, compressed or raw
// as the rule decides (exchange/compress_stage.h).
void client_compress_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
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
  const std::int64_t begin = now_ns();
  op.guarded([&] {
    run.outgoing =
        op.compression->encode(plan.peer, message, run.spare, op.messages_sent, run.compression);
  });
  op.recorder.record(Stage::compress, begin, plan.window, "", plan.bytes);
  next();
}

// The client pipeline in a data representation other than native: convert
// (instead of pack) writes the item's bytes in the file's representation
// into a buffer of its own; convert back (instead of unpack) stores what a
// read received into memory, converted.
void convert_stage(CollectiveOperation& op, std::size_t item, Next next) {
  const ClientItemPlan& plan = op.plan->client_items[item];
  ClientRun& run = op.client_runs[item];
  const std::int64_t begin = now_ns();
  op.guarded([&] {
    run.converted = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(plan.bytes));
    if (op.request.writing) op.request.conversion->pack(plan.from, plan.bytes, run.converted.get());
  });
  // Sent even when the conversion failed: the aggregator waits for the
  // message, and the agreement reports the failure to every process.
  run.data = run.converted.get();
  if (op.request.writing) op.recorder.record(Stage::pack, begin, plan.window, "", plan.bytes);
  next();
}

void convert_back_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  if (!op.request.writing && run.converted) {
    const ClientItemPlan& plan = op.plan->client_items[item];
    const std::int64_t begin = now_ns();
    op.guarded(
        [&] { op.request.conversion->unpack(plan.from, run.received, run.converted.get()); });
    op.recorder.record(Stage::unpack, begin, plan.window, "", run.received);
  }
  run.converted.reset();
  next();
}

void client_exchange_stage(CollectiveOperation& op, std::size_t item, Next next) {
  const ClientItemPlan& plan = op.plan->client_items[item];
  ClientRun& run = op.client_runs[item];
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded([&] {
    if (run.data == nullptr) return;  // failed to stage
    const int tag = data_tag(op, plan.window);
    if (!op.framed) {
      requests.push_back(exchange::post_client_message(op.context.comm(), op.request.writing,
                                                       run.data, plan.bytes, plan.peer, tag));
    } else if (op.request.writing) {
      exchange::post_framed_send(
          op.context.comm(), run.outgoing.header.data(), run.outgoing.payload.data(),
          static_cast<std::int64_t>(run.outgoing.payload.size()), plan.peer, tag, requests);
    } else {
      exchange::post_framed_receive(op.context.comm(), run.header.data(), run.data, plan.bytes,
                                    plan.peer, tag, requests);
    }
  });
  op.executor->wait_for(std::move(requests), [&op, item, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    const ClientItemPlan& plan = op.plan->client_items[item];
    ClientRun& run = op.client_runs[item];
    // A read's message stops at end of file: count what came (of a frame,
    // its payload, the second message; its length is known once decoded,
    // client_decompress_stage).
    if (!op.request.writing && code == MPI_SUCCESS && !statuses.empty()) {
      int received = 0;
      MPI_Get_count(&statuses.back(), MPI_BYTE, &received);
      (op.framed ? run.payload_bytes : run.received) = received;
    }
    if (op.framed && op.request.writing && code == MPI_SUCCESS && run.data != nullptr) {
      op.compression->record_send(plan.peer, run.outgoing,
                                  static_cast<double>(run.posted_ns) * 1e-9,
                                  static_cast<double>(now_ns()) * 1e-9);
    }
    if (code != MPI_SUCCESS) op.fail(std::make_exception_ptr(MpiError("data exchange", code)));
    op.recorder.record(Stage::exchange, run.posted_ns, plan.window, " client", plan.bytes, 1);
    next();
  });
}

// Reads with framed messages: the message in place, decoded if it came
// compressed.
void client_decompress_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  if (!op.framed || op.request.writing || run.data == nullptr || op.failure()) {
    next();
    return;
  }
  const ClientItemPlan& plan = op.plan->client_items[item];
  const std::int64_t begin = now_ns();
  run.received = 0;
  op.guarded([&] {
    run.received = static_cast<std::int64_t>(op.compression->decode(
        run.header,
        std::span(reinterpret_cast<std::byte*>(run.data), static_cast<std::size_t>(plan.bytes)),
        static_cast<std::size_t>(run.payload_bytes), run.scratch, run.compression));
  });
  op.recorder.record(Stage::decompress, begin, plan.window, "", run.received);
  next();
}

void unpack_stage(CollectiveOperation& op, std::size_t item, Next next) {
  ClientRun& run = op.client_runs[item];
  if (op.framed) {
    op.add_compression(run.compression);
    std::vector<std::byte>().swap(run.spare);
    std::vector<std::byte>().swap(run.scratch);
  }
  if (!op.request.writing && !run.staging.empty()) {
    const ClientItemPlan& plan = op.plan->client_items[item];
    const std::int64_t begin = now_ns();
    op.guarded([&] {
      exchange::unpack_stream(op.request.memory, plan.from, run.received, run.staging.data());
    });
    op.recorder.record(Stage::unpack, begin, plan.window, "", run.received);
  }
  run.staging.release();
  next();
}

// --- windows ---

// The window's pieces with their memory in `buffer`, in a list kept by the
// calling thread (it only grows: a window's list is rebuilt for every run,
// since the buffer is new each time).
std::span<const io::WindowPiece> window_pieces(const WindowPlan& plan, const ByteBuffer& buffer) {
  thread_local std::vector<io::WindowPiece> pieces;
  if (pieces.size() < plan.pieces.size()) pieces.resize(plan.pieces.size());
  char* const base = buffer.data();
  for (std::size_t i = 0; i < plan.pieces.size(); ++i) {
    const WindowPiecePlan& piece = plan.pieces[i];
    pieces[i] = io::WindowPiece{piece.offset, piece.length, base + piece.at};
  }
  return {pieces.data(), plan.pieces.size()};
}

void record_window_io(CollectiveOperation& op, const WindowPlan& plan, std::int64_t begin,
                      const io::WindowIoResult& result) {
  switch (result.method) {
    case io::WindowMethod::none:
      break;
    case io::WindowMethod::contiguous:
      op.recorder.add_method(Method::contiguous);
      break;
    case io::WindowMethod::sieve:
      op.recorder.add_method(Method::sieve);
      break;
    case io::WindowMethod::mapped:
      op.recorder.add_method(Method::mapped);
      break;
    case io::WindowMethod::vectored:
      op.recorder.add_method(Method::vectored);
      break;
  }
  op.recorder.record(Stage::io, begin, plan.window.index, "", result.file_bytes, 0,
                     result.requests);
}

// Sieving and staging go through a buffer kept by each thread that does
// window I/O (the I/O thread, the callers), which only grows: allocating
// and zero-filling one per window would cost as much as the copies.
std::vector<char>& thread_staging() {
  thread_local std::vector<char> staging;
  return staging;
}

void write_window(CollectiveOperation& op, std::size_t w) {
  const WindowPlan& plan = op.plan->windows[w];
  WindowRun& run = op.window_runs[w];
  const std::int64_t begin = now_ns();
  io::WindowIoResult result;
  op.guarded([&] {
    if (op.failure()) return;  // the operation fails anyway; keep the file as it was
    result = io::write_window(op.context.backend(), op.context.file().get(),
                              window_pieces(plan, run.buffer), op.request.settings->window_io,
                              thread_staging());
  });
  record_window_io(op, plan, begin, result);
}

void read_window(CollectiveOperation& op, std::size_t w) {
  const WindowPlan& plan = op.plan->windows[w];
  WindowRun& run = op.window_runs[w];
  const std::int64_t begin = now_ns();
  io::WindowIoResult result;
  run.before_end.clear();
  for (const WindowPlan::Part& part : plan.parts) run.before_end.push_back(part.bytes);
  op.guarded([&] {
    result = io::read_window(op.context.backend(), op.context.file().get(),
                             window_pieces(plan, run.buffer), op.request.settings->window_io,
                             thread_staging());
    // Each client's part is in file order: what lies past end of file is
    // its tail, which is not sent, so that the client's memory there is
    // left as it was (as an independent read leaves it).
    if (result.bytes_read < plan.total) {
      const std::int64_t end = std::min(plan.window.end, result.data_end);
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        const core::Access& access = op.plan->clients[plan.parts[p].client].access;
        run.before_end[p] = std::clamp<std::int64_t>(
            access.bytes_before(end) - access.bytes_before(plan.window.begin), 0,
            plan.parts[p].bytes);
      }
    }
  });
  record_window_io(op, plan, begin, result);
}

// Reads: the window from the file (on the executor's I/O side).
void window_read_stage(CollectiveOperation& op, std::size_t w, Next next) {
  op.window_runs[w].buffer.allocate(static_cast<std::size_t>(op.plan->windows[w].total));
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
    op.guarded([&] {
      run.outgoing[p] = op.compression->encode(op.plan->clients[plan.parts[p].client].rank, message,
                                               run.spares[p], op.messages_sent, run.compression);
    });
  }
  op.recorder.record(Stage::compress, begin, plan.window.index, "", bytes);
  next();
}

void window_exchange_stage(CollectiveOperation& op, std::size_t w, Next next) {
  const WindowPlan& plan = op.plan->windows[w];
  WindowRun& run = op.window_runs[w];
  run.posted_ns = now_ns();
  std::vector<MPI_Request> requests;
  op.guarded([&] {
    const int tag = data_tag(op, plan.window.index);
    if (op.framed) {
      run.headers.resize(plan.parts.size());
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        const int client = op.plan->clients[plan.parts[p].client].rank;
        if (op.request.writing) {
          exchange::post_framed_receive(op.context.comm(), run.headers[p].data(),
                                        run.buffer.data() + plan.parts[p].at, plan.parts[p].bytes,
                                        client, tag, requests);
        } else {
          const exchange::CompressStage::Outgoing& frame = run.outgoing[p];
          exchange::post_framed_send(op.context.comm(), frame.header.data(), frame.payload.data(),
                                     static_cast<std::int64_t>(frame.payload.size()), client, tag,
                                     requests);
        }
      }
      return;
    }
    std::vector<exchange::WindowMessage> messages;
    for (std::size_t p = 0; p < plan.parts.size(); ++p) {
      const WindowPlan::Part& part = plan.parts[p];
      messages.push_back(
          exchange::WindowMessage{op.plan->clients[part.client].rank, part.at,
                                  op.request.writing ? part.bytes : run.before_end[p]});
    }
    exchange::post_window_messages(op.context.comm(), op.request.writing, run.buffer.data(),
                                   messages, tag, requests);
  });
  op.executor->wait_for(std::move(requests), [&op, w, next = std::move(next)](
                                                 int code, std::span<const MPI_Status> statuses) {
    const WindowPlan& plan = op.plan->windows[w];
    WindowRun& run = op.window_runs[w];
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("data exchange", code)));
    } else if (op.framed && op.request.writing && statuses.size() == 2 * plan.parts.size()) {
      // Each part's header, then its payload.
      run.payload_bytes.assign(plan.parts.size(), 0);
      for (std::size_t p = 0; p < plan.parts.size(); ++p) {
        int received = 0;
        MPI_Get_count(&statuses[2 * p + 1], MPI_BYTE, &received);
        run.payload_bytes[p] = received;
      }
    } else if (op.framed && statuses.size() == 2 * plan.parts.size()) {
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
  if (!op.framed || !op.request.writing || op.failure()) {
    next();
    return;
  }
  const WindowPlan& plan = op.plan->windows[w];
  WindowRun& run = op.window_runs[w];
  const std::int64_t begin = now_ns();
  op.guarded([&] {
    for (std::size_t p = 0; p < plan.parts.size(); ++p) {
      const WindowPlan::Part& part = plan.parts[p];
      const std::size_t got = op.compression->decode(
          run.headers[p],
          std::span(reinterpret_cast<std::byte*>(run.buffer.data() + part.at),
                    static_cast<std::size_t>(part.bytes)),
          static_cast<std::size_t>(run.payload_bytes[p]), run.scratch, run.compression);
      if (static_cast<std::int64_t>(got) != part.bytes) {
        throw exchange::MalformedMessage("a client's part of " + std::to_string(got) + " bytes, " +
                                         std::to_string(part.bytes) + " expected");
      }
    }
  });
  op.recorder.record(Stage::decompress, begin, plan.window.index, "", plan.total);
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

// --- Alltoallw rounds ---

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

// --- direct mode, agreement ---

// Atomic mode: a direct access locks this process's own bytes, and lets
// go before the agreement (another process's direct access may wait for
// them).
void direct_lock_stage(CollectiveOperation& op, std::size_t, Next next) {
  if (op.request.atomic && !op.failure()) {
    op.guarded([&] {
      op.atomic_pending = op.request.atomic->lock_access(op.request.access, op.request.writing);
    });
  }
  after_atomic_lease(op, std::move(next));
}

void direct_io_stage(CollectiveOperation& op, std::size_t, Next next) {
  op.executor->run_io([&op, next = std::move(next)] {
    if (!op.failure()) access_file_directly(op);
    op.atomic_lease.release();
    next();
  });
}

// Durable writes (hint flowio_durable): a process that wrote makes the
// file's data durable before it agrees, so the future completes only once
// the checkpoint is on storage, and the sync overlaps whatever the
// program does meanwhile.
void persist_stage(CollectiveOperation& op, std::size_t, Next next) {
  const bool wrote =
      op.accessed_directly || (op.plan && op.plan->two_phase && (!op.plan->windows.empty()));
  if (!op.request.writing || !op.request.settings->durable || !wrote || op.failure()) {
    next();
    return;
  }
  op.executor->run_io([&op, next = std::move(next)] {
    const std::int64_t begin = now_ns();
    op.guarded([&] { op.context.file().sync_data(); });
    op.recorder.record(Stage::io, begin, -1, " fdatasync", 0, 0, 1);
    next();
  });
}

void agree_stage(CollectiveOperation& op, std::size_t, Next next) {
  op.agree_begin_ns = now_ns();
  std::vector<MPI_Request> requests;
  const int tag = message_tag(MessageKind::outcome, op.sequence);
  op.guarded([&] {
    requests = op.agreement.post(op.context.comm(), tag, op.context.rank(), op.context.ranks(),
                                 op.failure());
  });
  op.executor->wait_for(std::move(requests), [&op, next = std::move(next)](
                                                 int code, std::span<const MPI_Status>) {
    if (code != MPI_SUCCESS) {
      op.fail(std::make_exception_ptr(MpiError("outcome agreement", code)));
    }
    std::vector<MPI_Request> replies;
    op.guarded([&] { replies = op.agreement.reply(); });
    op.executor->wait_for(std::move(replies), [&op, next](int code, std::span<const MPI_Status>) {
      if (code != MPI_SUCCESS) {
        op.fail(std::make_exception_ptr(MpiError("outcome agreement", code)));
      }
      op.outcome =
          op.agreement.outcome(op.request.writing ? "collective write" : "collective read");
      // Every process's part is done with the file: the atomic-mode lease
      // of two-phase I/O may go.
      op.atomic_lease.release();
      op.recorder.record(Stage::agree, op.agree_begin_ns);
      next();
    });
  });
}

void leave_item(CollectiveOperation& op) { op.item_done(); }
void leave_direct(CollectiveOperation& op) { op.runner->enqueue(PipelineKind::agree, op, 1); }
void leave_agree(CollectiveOperation& op) { op.complete(); }

}  // namespace

const Pipeline& pipeline(PipelineKind kind) {
  static const Pipeline kControl{
      "control", {realms_stage, metadata_stage, plan_stage}, true, leave_control};
  static const Pipeline kClient{"client",
                                {pack_stage, client_compress_stage, client_exchange_stage,
                                 client_decompress_stage, unpack_stage},
                                false,
                                leave_item};
  static const Pipeline kClientConverted{"client",
                                         {convert_stage, client_compress_stage,
                                          client_exchange_stage, client_decompress_stage,
                                          convert_back_stage},
                                         false,
                                         leave_item};
  static const Pipeline kWindow{"window",
                                {window_read_stage, window_compress_stage, window_exchange_stage,
                                 window_decompress_stage, window_write_stage},
                                false,
                                leave_item};
  static const Pipeline kRound{
      "round", {round_prepare_stage, round_exchange_stage, round_finish_stage}, true, leave_item};
  static const Pipeline kDirect{
      "direct", {direct_lock_stage, direct_io_stage}, false, leave_direct};
  static const Pipeline kAgree{"agree", {persist_stage, agree_stage}, false, leave_agree};
  switch (kind) {
    case PipelineKind::control:
      return kControl;
    case PipelineKind::client_zero_copy:
    case PipelineKind::client_staged:
      return kClient;
    case PipelineKind::client_converted:
      return kClientConverted;
    case PipelineKind::window:
      return kWindow;
    case PipelineKind::round:
      return kRound;
    case PipelineKind::direct:
      return kDirect;
    case PipelineKind::agree:
    case PipelineKind::count:
      break;
  }
  return kAgree;
}

std::size_t pipeline_limit(PipelineKind kind, int buffers_in_flight, int aggregators) {
  const auto in_flight = static_cast<std::size_t>(std::max(buffers_in_flight, 1));
  switch (kind) {
    case PipelineKind::client_zero_copy:
      // Zero-copy items pin no buffer of ours: let more of them fly.
      return in_flight * static_cast<std::size_t>(std::max(aggregators, 1));
    case PipelineKind::client_staged:
    case PipelineKind::client_converted:
    case PipelineKind::window:
    case PipelineKind::round:
      return in_flight;
    default:
      return 0;
  }
}

void start_data_phase(CollectiveOperation& op) {
  if (op.atomic_pending.valid()) {
    after_atomic_lease(op, [&op] { start_data_phase(op); });
    return;
  }
  if (op.told_by_gather) {
    op.complete();
    return;
  }
  GraphRunner& runner = *op.runner;
  const bool two_phase = op.plan && op.plan->two_phase;
  if (op.failure() || anyone_failed_early(op) || !two_phase) {
    const bool access = !op.failure() && !anyone_failed_early(op) && !op.accessed_directly;
    const bool anyone = std::any_of(op.summaries.begin(), op.summaries.end(),
                                    [](const core::AccessSummary& s) { return s.bytes > 0; });
    runner.enqueue(access && anyone ? PipelineKind::direct : PipelineKind::agree, op, 1);
    return;
  }
  if (!op.plan->complete) {
    op.fail(std::make_exception_ptr(
        MpiError("collective plan: reusing a plan whose compilation failed", 0)));
    runner.enqueue(PipelineKind::agree, op, 1);
    return;
  }
  const CollectivePlan& plan = *op.plan;
  op.client_runs.resize(plan.client_items.size());
  op.window_runs.resize(plan.windows.size());
  op.round_runs.resize(plan.rounds.size());
  op.data_phase_ns = now_ns();
  // Point-to-point messages are framed unless compression is off: both
  // sides know it from the hint, which every process gives alike.
  if (plan.rounds.empty() && begin_compression(op)) {
    op.framed = true;
    if (op.request.writing) {
      op.messages_sent = static_cast<std::int64_t>(plan.client_items.size());
    } else {
      for (const WindowPlan& window : plan.windows) {
        op.messages_sent += static_cast<std::int64_t>(window.parts.size());
      }
    }
  }
  const std::size_t items =
      plan.rounds.empty() ? plan.client_items.size() + plan.windows.size() : plan.rounds.size();
  op.remaining.store(items);
  if (items == 0) {
    runner.enqueue(PipelineKind::agree, op, 1);
    return;
  }
  if (!plan.rounds.empty()) {
    runner.enqueue(PipelineKind::round, op, plan.rounds.size());
    return;
  }
  // Windows first: an aggregator's receives (or sends) posted early let
  // the clients' messages complete as they come.
  if (!plan.windows.empty()) runner.enqueue(PipelineKind::window, op, plan.windows.size());
  if (!plan.client_items.empty()) {
    runner.enqueue(op.request.conversion            ? PipelineKind::client_converted
                   : op.request.memory.contiguous() ? PipelineKind::client_zero_copy
                                                    : PipelineKind::client_staged,
                   op, plan.client_items.size());
  }
}

void access_file_directly(CollectiveOperation& op) {
  op.guarded([&] {
    const core::Access& access = op.request.access;
    if (access.empty()) return;
    const std::int64_t begin = now_ns();
    const core::MemoryLayout& memory = op.request.memory;
    const core::FileView& view = *access.view();
    io::StorageBackend& backend = op.context.backend();
    const int fd = op.context.file().get();
    const bool writing = op.request.writing;
    std::int64_t moved = 0;
    if (op.request.conversion) {
      // Data representation hook: converted in cache-sized chunks.
      moved = writing ? write_converted(backend, fd, view, access.stream_begin(),
                                        *op.request.conversion, kConversionChunkBytes)
                      : read_converted(backend, fd, view, access.stream_begin(),
                                       *op.request.conversion, kConversionChunkBytes);
    } else if (memory.contiguous() && access.file_end() - access.file_begin() == access.bytes()) {
      // One piece in the file and in memory (the common small call): one
      // request, without walking the view.
      iovec buffer{reinterpret_cast<void*>(memory.address_of(0)),
                   static_cast<std::size_t>(access.bytes())};
      const io::IoRequest request{access.file_begin(), std::span<const iovec>(&buffer, 1),
                                  buffer.iov_len};
      if (writing) {
        backend.write(fd, std::span<const io::IoRequest>(&request, 1));
        moved = access.bytes();
      } else {
        std::size_t got = 0;
        backend.read(fd, std::span<const io::IoRequest>(&request, 1),
                     std::span<std::size_t>(&got, 1));
        moved = static_cast<std::int64_t>(got);
      }
    } else if (memory.contiguous()) {
      moved = writing ? io::write_to_view(backend, fd, view, access.stream_begin(), memory)
                      : io::read_from_view(backend, fd, view, access.stream_begin(), memory);
    } else {
      // Small memory pieces make slow iovecs: stage through a buffer of at
      // most one window, packed or unpacked by memcpy.
      const std::int64_t chunk = std::min(access.bytes(), op.request.settings->realms.window_bytes);
      // Not value-initialized: every byte is packed or read before use.
      const auto staging = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(chunk));
      const core::FlatType bytes_type(core::make_run(1), 0, 1);
      for (std::int64_t from = 0; from < access.bytes(); from += chunk) {
        const std::int64_t length = std::min(chunk, access.bytes() - from);
        const core::MemoryLayout staged{&bytes_type, length,
                                        reinterpret_cast<std::int64_t>(staging.get())};
        if (writing) {
          exchange::pack_stream(memory, from, length, staging.get());
          moved += io::write_to_view(backend, fd, view, access.stream_begin() + from, staged);
        } else {
          const std::int64_t got =
              io::read_from_view(backend, fd, view, access.stream_begin() + from, staged);
          exchange::unpack_stream(memory, from, got, staging.get());
          moved += got;
          if (got < length) break;  // end of file
        }
      }
    }
    op.recorder.record(Stage::io, begin, -1, "", moved);
    op.recorder.add_method(Method::direct);
    if (!writing) op.bytes_read_directly = moved;
    op.accessed_directly = true;
  });
}

}  // namespace flowio::runtime
