// The pipelines every collective call runs through: its stages
// (stages/stages.h) in the order the runners wire them, and what happens
// between pipelines. The stage list is the whole call:
//
//   at the call (caller's thread)            offsets
//   control  (per operation, in call order)  gather -> realms -> metadata
//                                            -> plan -> plan check
//   client   (per message to an aggregator)  pack -> compress -> exchange
//                                            -> decompress -> unpack
//                                            (convert ... convert back, in
//                                            another data representation)
//   window   (per window of this aggregator) window read -> compress ->
//                                            exchange -> decompress ->
//                                            window write
//   round    (per Alltoallw round, in order) prepare -> exchange -> finish
//   direct   (per operation, direct mode)    direct lock -> direct io
//   agree    (per operation)                 persist -> agree
//
// Both runners (graph_runner.h) run this list; which one runs a call is
// chosen in one place (CollectiveCall::make). What the fast paths of
// a call do is a property of what its stages find: a gather that settles
// the call leaves the control stages nothing to do, and leaving them it
// completes (no data phase, no agreement); a plan in direct mode has no
// exchange.
//
// Between pipelines, the runner moves the operation to its next phase
// (stages/operation_phases.h): leaving control, it waits for its turn
// (OperationOrder::data_phase_ready) and begins its data phase; the last
// item to leave a data pipeline begins its agreement; leaving the
// agreement (or control, for a call its gather settled) completes the
// call (CollectiveCall::complete, the only place that does). Where the
// agreement begins (or a settled call leaves control) the caller's memory
// is released (CollectiveRequest::on_memory_released): a notification
// before persist and the agreement, not a completion.
#pragma once

#include <cstddef>
#include <span>

#include "runtime/stages/stages.h"

namespace flowio::runtime {

class CollectiveCall;

enum class PipelineKind {
  control,
  client_zero_copy,  // client items whose memory is contiguous: nothing staged
  client_staged,     // client items packed through a staging buffer
  client_converted,  // client items converted to the file's data representation
  window,
  round,
  direct,
  agree,
  count,
};

struct Pipeline {
  const char* name;
  std::span<const StageBody> stages;
  // Items pass each stage one at a time, in the order they entered (a
  // serial node): for the control stages, so that every process consults
  // its plan cache in call order, and for rounds, collective calls posted
  // in one order.
  bool serial;
  // Called when an item leaves the last stage. The item's call may be gone
  // after it.
  void (*leave)(CollectiveCall& call);
};

// The stage run at the call, before the control pipeline.
inline constexpr StageBody kAtTheCall = offsets_stage;

const Pipeline& pipeline(PipelineKind kind);

// How many items of pipeline `kind` may be inside it at once (0: no
// bound), for operations with `buffers_in_flight` and `aggregators`.
std::size_t pipeline_limit(PipelineKind kind, int buffers_in_flight, int aggregators);

}  // namespace flowio::runtime
