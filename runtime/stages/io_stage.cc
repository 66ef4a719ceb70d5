// Io: an aggregator's window and the file, on the executor's I/O side,
// by the method io/window_io.h picks (window_access.h): read at the start
// of a read's window item, written at the end of a write's.
#include <vector>

#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"
#include "runtime/stages/window_access.h"

namespace flowio::runtime {

// The window's buffer, made by an aggregator that failed too (its clients'
// messages need somewhere to go), then, for reads, the window from the
// file.
void window_read_stage(Operation& op, std::size_t w, Next next) {
  Moving& moving = op.phase<Moving>();
  enter_stage(op, "collective.window_read");
  op.guarded(
      [&] {
        moving.window_runs[w].buffer.allocate(
            static_cast<std::size_t>(moving.plan->windows[w].total));
      },
      "window_read");
  if (op.request().writing) {
    next();
    return;
  }
  op.executor().run_io([&op, w, next = std::move(next)] {
    read_window(op, w);
    next();
  });
}

// The end of a window item: its framed messages' statistics go to the
// operation and their buffers away; a write's window goes to the file.
void window_write_stage(Operation& op, std::size_t w, Next next) {
  Moving& moving = op.phase<Moving>();
  WindowRun& run = moving.window_runs[w];
  enter_stage(op, "collective.window_write");
  if (moving.framed) {
    op.add_compression(run.compression);
    run.outgoing.clear();
    std::vector<std::vector<std::byte>>().swap(run.spares);
    std::vector<std::byte>().swap(run.scratch);
  }
  if (!op.request().writing) {
    run.buffer.release();
    next();
    return;
  }
  op.executor().run_io([&op, w, next = std::move(next)] {
    write_window(op, w);
    op.phase<Moving>().window_runs[w].buffer.release();
    next();
  });
}

}  // namespace flowio::runtime
