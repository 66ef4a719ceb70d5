// GraphRunner: what runs the pipelines of pipelines.h. Two runners wire
// the same pipelines: TbbGraphRunner, a oneTBB flow graph per file whose
// nodes run on the engine's workers (background), and InlineGraphRunner,
// which runs them on the caller's thread for a blocking call alone on its
// file (inline). Which one runs a call is chosen in one place:
// CollectiveCall::make.
#pragma once

#include <cstddef>

#include "runtime/engine/pipelines.h"
#include "runtime/stages/executor.h"

namespace flowio::runtime {

class CollectiveCall;

class GraphRunner {
 public:
  virtual ~GraphRunner() = default;
  // Runs the stage of the call (offsets) on this thread, the caller's,
  // then sends the call into the control pipeline. Calls are started in
  // call order, and enter the control pipeline in that order.
  void start(CollectiveCall& call);
  // Sends items 0..items-1 of `call` into pipeline `kind`, in order.
  virtual void enqueue(PipelineKind kind, CollectiveCall& call, std::size_t items) = 0;
  // Where the stages this runner runs wait.
  virtual Executor& executor() = 0;
};

}  // namespace flowio::runtime
