#include "runtime/collective_stages.h"

#include <algorithm>

#include "flowio/error.h"
#include "runtime/agree_stages.h"
#include "runtime/client_stages.h"
#include "runtime/clock.h"
#include "runtime/collective_operation.h"
#include "runtime/control_stages.h"
#include "runtime/direct_stages.h"
#include "runtime/graph_runner.h"
#include "runtime/round_stages.h"
#include "runtime/stage_support.h"
#include "runtime/window_stages.h"

namespace flowio::runtime {

const Pipeline& pipeline(PipelineKind kind) {
  switch (kind) {
    case PipelineKind::control:
      return control_pipeline();
    case PipelineKind::client_zero_copy:
    case PipelineKind::client_staged:
      return client_pipeline();
    case PipelineKind::client_converted:
      return client_converted_pipeline();
    case PipelineKind::window:
      return window_pipeline();
    case PipelineKind::round:
      return round_pipeline();
    case PipelineKind::direct:
      return direct_pipeline();
    case PipelineKind::agree:
    case PipelineKind::count:
      break;
  }
  return agree_pipeline();
}

std::size_t pipeline_limit(PipelineKind kind, int buffers_in_flight, int aggregators) {
  const auto in_flight = static_cast<std::size_t>(std::max(buffers_in_flight, 1));
  switch (kind) {
    case PipelineKind::client_zero_copy:
    case PipelineKind::client_converted:
      // Zero-copy items pin no buffer of ours: let more of them fly.
      // Converted items pin one (recycled_buffers.h) but fly as many: held
      // to a few, a client converted its later items only after its earlier
      // messages were received, and every aggregator waited for them (an
      // external32 write 0.6-0.7x of native instead of 0.8-1.0x on 4 ranks,
      // bench/README.md). A client's converted bytes in flight are at most
      // its access, or that many items.
      return in_flight * static_cast<std::size_t>(std::max(aggregators, 1));
    case PipelineKind::client_staged:
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
  GraphRunner& runner = *op.runner;
  // Some process could not make its part of the plan (every process knows
  // from the plan check), or this call would rerun a plan that some
  // process could not make (every process knows from the check of the
  // call that compiled it, which started its data phase before this one):
  // no data phase anywhere.
  if (op.failed_at_plan_check) {
    runner.enqueue(PipelineKind::agree, op, 1);
    return;
  }
  if (op.plan_reused && !(op.plan && op.plan->complete)) {
    op.fail(std::make_exception_ptr(MpiError(
                "collective plan: an earlier call with the same accesses, whose plan this one "
                "reuses, could not make it on every process",
                0)),
            "plan");
    runner.enqueue(PipelineKind::agree, op, 1);
    return;
  }
  const bool two_phase = op.plan && op.plan->two_phase;
  // Two-phase I/O goes on when this process alone failed in the data
  // phase: its partners wait for its messages. Failures every process
  // knows of end it here.
  if (op.failed_at_gather || anyone_failed_early(op) || !two_phase) {
    const bool access = !op.failure() && !anyone_failed_early(op) && !op.accessed_directly;
    const bool anyone = std::any_of(op.summaries.begin(), op.summaries.end(),
                                    [](const core::AccessSummary& s) { return s.bytes > 0; });
    runner.enqueue(access && anyone ? PipelineKind::direct : PipelineKind::agree, op, 1);
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

}  // namespace flowio::runtime
