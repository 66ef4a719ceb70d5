#include "runtime/engine/graph_runner.h"

#include <cassert>
#include <cstdint>

#include "runtime/engine/collective_call.h"

namespace flowio::runtime {

void GraphRunner::start(CollectiveCall& call) {
  // The stage at the call never waits: it posts its messages and goes on.
  bool went_on = false;
  kAtTheCall(call.operation(), 0,
             Next([](void* flag, std::uintptr_t) { *static_cast<bool*>(flag) = true; }, &went_on));
  assert(went_on && "the stage at the call went on at once");
  enqueue(PipelineKind::control, call, 1);
}

}  // namespace flowio::runtime
