// Persist: durable writes (hint flowio_durable). A process that wrote
// makes the file's data durable before it agrees, so the future completes
// only once the checkpoint is on storage, and the sync overlaps whatever
// the program does meanwhile.
#include <cassert>

#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

void persist_stage(Operation& op, std::size_t, Next next) {
  const Agreeing& agreeing = op.phase<Agreeing>();
  assert(agreeing.gather != GatherOutcome::settled && "a settled call completes leaving control");
  enter_stage(op, "collective.persist");
  // Data moved at the call was synced there.
  const bool wrote = (agreeing.route == DataRoute::direct && agreeing.accessed_directly) ||
                     (agreeing.route == DataRoute::two_phase && !agreeing.plan->windows.empty());
  if (!op.request().writing || !op.request().settings->durable || !wrote || op.failed()) {
    next();
    return;
  }
  op.executor().run_io([&op, next = std::move(next)] {
    const std::int64_t begin = now_ns();
    op.guarded([&] { op.file().file().sync_data(); }, "persist");
    op.recorder().record(Stage::io, begin, -1, " fdatasync", 0, 0, 1);
    next();
  });
}

}  // namespace flowio::runtime
