// The start of a data phase: its runs, its framing, its items; and the
// atomic-mode lease it may wait for.
#include "runtime/engine/clock.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {

DataItems prepare_data_phase(Operation& op) {
  Moving& moving = op.phase<Moving>();
  if (moving.route != DataRoute::two_phase) return DataItems{};
  moving.started_ns = now_ns();
  const CollectivePlan& plan = *moving.plan;
  moving.client_runs.resize(plan.client_items.size());
  moving.window_runs.resize(plan.windows.size());
  moving.round_runs.resize(plan.live_rounds.size());
  // Point-to-point messages are framed unless compression is off: both
  // sides know it from the hint, which every process gives alike.
  if (!plan.alltoallw && begin_compression(op, moving.compression_rule, moving.compression)) {
    moving.framed = true;
    if (op.request().writing) {
      moving.messages_sent = static_cast<std::int64_t>(plan.client_items.size());
    } else {
      for (const WindowPlan& window : plan.windows) {
        moving.messages_sent += static_cast<std::int64_t>(window.parts.size());
      }
    }
  }
  DataItems items;
  if (plan.alltoallw) {
    items.round = plan.live_rounds.size();
  } else {
    items.window = plan.windows.size();
    items.client = plan.client_items.size();
  }
  moving.remaining.store(items.client + items.window + items.round);
  return items;
}

void after_lease(Operation& op, Next then) {
  Moving& moving = op.phase<Moving>();
  if (!moving.lease_pending.valid()) {
    then();
    return;
  }
  if (op.runs_inline()) {
    op.guarded([&] { moving.lease = moving.lease_pending.get(); }, nullptr);
    then();
    return;
  }
  moving.lease_pending.then(inline_executor(), [&op, then](Future<sync::Lease> held) {
    op.guarded([&] { op.phase<Moving>().lease = held.get(); }, nullptr);
    then();
  });
}

}  // namespace flowio::runtime
