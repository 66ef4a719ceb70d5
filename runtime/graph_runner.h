// GraphRunner: what runs the pipelines of collective_stages.h. Two
// runners wire the same pipelines: TbbGraphRunner, a oneTBB flow graph per
// file whose nodes run on the engine's workers (background), and
// InlineGraphRunner, which runs them on the caller's thread for a blocking
// call alone on its file (inline).
#pragma once

#include <cstddef>

#include "runtime/collective_stages.h"

namespace flowio::runtime {

class CollectiveOperation;
class Executor;

class GraphRunner {
 public:
  virtual ~GraphRunner() = default;
  // Sends items 0..items-1 of `operation` into pipeline `kind`, in order.
  virtual void enqueue(PipelineKind kind, CollectiveOperation& operation, std::size_t items) = 0;
  virtual Executor& executor() = 0;
};

}  // namespace flowio::runtime
