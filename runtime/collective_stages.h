// The stages of a collective operation and the pipelines they form: the
// graph every collective call is compiled into.
//
//   control  (per operation, in call order)  realms -> metadata -> plan
//                                            -> plan check (compiled plans)
//   client   (per message to an aggregator)  pack -> exchange -> unpack
//                                            (convert -> exchange -> convert
//                                            back, in another data
//                                            representation; or the
//                                            aggregator converts a write's
//                                            bytes, aggregator_conversion.h)
//   window   (per window of this aggregator) read -> exchange -> write
//   round    (per Alltoallw round, in order) prepare -> exchange -> finish
//   direct   (per operation, direct mode)    io
//   agree    (per operation)                 persist -> agree
//
// The offsets stage runs at the call, before any of these, on the caller's
// thread (CollectiveOperation::start): the summary gather must be posted in
// call order. A failure while a plan is compiled ends the operation before
// any data phase, on every process (the plan check). The control pipeline
// hands the operation to the DataPhaseScheduler, which starts its data
// phase: its client items, windows or rounds enter their pipelines,
// bounded by limiters (flowio_buffers_in_flight windows per aggregator, as
// many staged client items, zero-copy client items times the number of
// aggregators), and the last one to leave sends the operation to the
// agreement.
//
// A stage body runs for one item of one operation and calls `next` when the
// item may go on: at once, or later from the executor (executor.h) when it
// waits for MPI or the file. Bodies keep failures in the operation instead
// of throwing, so every process goes through every stage. The runners
// (graph_runner.h) wire these pipelines, and nothing here knows which one
// runs them.
//
// Each pipeline's stages are in a file of their own (control_stages,
// client_stages, window_stages, round_stages, direct_stages,
// agree_stages), what several share in stage_support and window_access;
// this header and pipeline() are what the runners see.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace flowio::runtime {

class CollectiveContext;
class CollectiveOperation;
struct CollectiveRequest;

using Next = std::function<void()>;
using StageBody = void (*)(CollectiveOperation& operation, std::size_t item, Next next);

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
  std::vector<StageBody> stages;
  // Items pass each stage one at a time, in order (a serial node): for the
  // control stages, so that every process consults its plan cache in call
  // order, and for rounds, collective calls posted in one order.
  bool serial;
  // Called when an item leaves the last stage: the control pipeline hands
  // the operation to the DataPhaseScheduler, the data pipelines count
  // their items down to the agreement, the agreement completes the
  // operation. The item's operation may be gone after it.
  void (*leave)(CollectiveOperation& operation);
};

const Pipeline& pipeline(PipelineKind kind);

// How many items of pipeline `kind` may be inside it at once (0: no
// bound), for operations with `buffers_in_flight` and `aggregators`.
std::size_t pipeline_limit(PipelineKind kind, int buffers_in_flight, int aggregators);

// Starts the data phase of an operation the scheduler let go: its items
// enter their pipelines (or it goes to direct I/O, or straight to the
// agreement).
void start_data_phase(CollectiveOperation& operation);

// This process's part of a direct-mode operation: its own pieces, accessed
// by itself (also done at the call, before the gather, where it applies).
// Its span (stage io) begins at `begin_ns`, or when it is called if -1.
void access_file_directly(CollectiveOperation& operation, std::int64_t begin_ns = -1);
// Its body: moves `request`'s data between its memory and its pieces of
// the file and returns the bytes moved (a read's: those before the end of
// the file); the caller records the span (stage io, method direct).
// Throws what the access throws. `request.access` is not empty.
std::int64_t move_own_part(CollectiveContext& context, const CollectiveRequest& request);

}  // namespace flowio::runtime
