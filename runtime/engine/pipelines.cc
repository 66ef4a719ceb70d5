#include "runtime/engine/pipelines.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "runtime/engine/clock.h"
#include "runtime/engine/collective_call.h"
#include "runtime/engine/collective_context.h"
#include "runtime/engine/graph_runner.h"

namespace flowio::runtime {
namespace {

// The agreement: the operation's data phase is over (or never began), and
// with it every use of the caller's memory on this process, which is
// released before persist and the agreement run (a durable write behind
// returns here, api/file_write_behind.cc).
void begin_agreement(CollectiveCall& call) {
  Operation& op = call.operation();
  op.begin_phase<Agreeing, Moving>();
  op.release_memory();
  call.runner().enqueue(PipelineKind::agree, call, 1);
}

// The data phase, once the lease is held (at once outside atomic mode):
// its items in their pipelines (windows first: an aggregator's receives,
// or sends, posted early let the clients' messages complete as they come),
// or this process's own part, or straight to the agreement.
void enter_data_phase(void* context, std::uintptr_t) {
  CollectiveCall& call = *static_cast<CollectiveCall*>(context);
  Operation& op = call.operation();
  const DataItems items = prepare_data_phase(op);
  GraphRunner& runner = call.runner();
  switch (op.phase<Moving>().route) {
    case DataRoute::none:
      begin_agreement(call);
      return;
    case DataRoute::direct:
      runner.enqueue(PipelineKind::direct, call, 1);
      return;
    case DataRoute::two_phase:
      break;
  }
  if (items.client + items.window + items.round == 0) {
    begin_agreement(call);
    return;
  }
  if (items.round > 0) {
    runner.enqueue(PipelineKind::round, call, items.round);
    return;
  }
  if (items.window > 0) runner.enqueue(PipelineKind::window, call, items.window);
  if (items.client > 0) {
    const CollectiveRequest& request = op.request();
    runner.enqueue(request.conversion            ? PipelineKind::client_converted
                   : request.memory.contiguous() ? PipelineKind::client_zero_copy
                                                 : PipelineKind::client_staged,
                   call, items.client);
  }
}

// The operation's turn has come: its data phase begins.
void begin_data_phase(CollectiveCall& call) {
  Operation& op = call.operation();
  op.begin_phase<Moving, Planning>(data_route(op));
  after_lease(op, Next(enter_data_phase, &call));
}

// Leaving the control pipeline: the operation waits for its turn to start
// its data phase (at once, unless an earlier operation it could interfere
// with is still running). Nothing touches the call after this but its
// data phase, which may run to completion from here.
void leave_control(CollectiveCall& call) {
  Operation& op = call.operation();
  if (op.runs_inline()) {
    call.context().order().data_phase_alone(op.sequence());
    // The gather settled the call (only one that runs inline moves its
    // part early): every process did its part and none failed, as every
    // process knows, so nothing is left to move, persist or agree.
    if (op.phase<Planning>().gather == GatherOutcome::settled) {
      op.begin_phase<Agreeing, Planning>();
      op.release_memory();
      complete_call(call);
      return;
    }
    begin_data_phase(call);
    return;
  }
  call.context().order().data_phase_ready(op.sequence(), data_footprint(op),
                                          [&call] { begin_data_phase(call); });
}

// One item fewer in the data phase; the last one's leaving begins the
// agreement.
void leave_item(CollectiveCall& call) {
  Operation& op = call.operation();
  Moving& moving = op.phase<Moving>();
  if (moving.remaining.fetch_sub(1) != 1) return;
  if (moving.compression) {
    // Every item has added its statistics: the stage is complete.
    const std::unique_ptr<CompressionStatistics> statistics = op.compression_statistics();
    moving.compression->finish(static_cast<double>(now_ns() - moving.started_ns) * 1e-9,
                               statistics ? *statistics : CompressionStatistics{});
  }
  begin_agreement(call);
}

// The stage lists and the pipelines, constant: a call looks its pipeline
// up at every stage, so the table is built by the compiler, not at first use.
constexpr StageBody kControlStages[] = {gather_stage, realms_stage, metadata_stage, plan_stage,
                                        plan_check_stage};
constexpr StageBody kClientStages[] = {pack_stage, client_compress_stage, client_exchange_stage,
                                       client_decompress_stage, unpack_stage};
constexpr StageBody kClientConvertedStages[] = {convert_stage, client_compress_stage,
                                                client_exchange_stage, client_decompress_stage,
                                                convert_back_stage};
constexpr StageBody kWindowStages[] = {window_read_stage, window_compress_stage,
                                       window_exchange_stage, window_decompress_stage,
                                       window_write_stage};
constexpr StageBody kRoundStages[] = {round_prepare_stage, round_exchange_stage,
                                      round_finish_stage};
constexpr StageBody kDirectStages[] = {direct_lock_stage, direct_io_stage};
constexpr StageBody kAgreeStages[] = {persist_stage, agree_stage};

// By PipelineKind.
constexpr Pipeline kPipelines[] = {
    {"control", kControlStages, true, leave_control},
    {"client", kClientStages, false, leave_item},           // zero copy
    {"client", kClientStages, false, leave_item},           // staged
    {"client", kClientConvertedStages, false, leave_item},  // converted
    {"window", kWindowStages, false, leave_item},
    {"round", kRoundStages, true, leave_item},
    {"direct", kDirectStages, false, begin_agreement},
    {"agree", kAgreeStages, false, complete_call},
};
static_assert(std::size(kPipelines) == static_cast<std::size_t>(PipelineKind::count));

}  // namespace

const Pipeline& pipeline(PipelineKind kind) { return kPipelines[static_cast<std::size_t>(kind)]; }

std::size_t pipeline_limit(PipelineKind kind, int buffers_in_flight, int aggregators) {
  const auto in_flight = static_cast<std::size_t>(std::max(buffers_in_flight, 1));
  switch (kind) {
    case PipelineKind::client_zero_copy:
    case PipelineKind::client_converted:
      // Zero-copy items pin no buffer of ours: let more of them fly.
      // Converted items pin one (recycled_buffers.h) but fly as many: held
      // to a few, a client converted its later items only after its earlier
      // messages were received, and every aggregator waited for them. A
      // client's converted bytes in flight are at most its access, or that
      // many items.
      return in_flight * static_cast<std::size_t>(std::max(aggregators, 1));
    case PipelineKind::client_staged:
    case PipelineKind::window:
    case PipelineKind::round:
      return in_flight;
    default:
      return 0;
  }
}

}  // namespace flowio::runtime
