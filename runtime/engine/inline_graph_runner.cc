#include "runtime/engine/inline_graph_runner.h"

#include "runtime/engine/backoff.h"
#include "runtime/engine/clock.h"
#include "runtime/engine/collective_call.h"

namespace flowio::runtime {

void InlineGraphRunner::enqueue(PipelineKind kind, CollectiveCall& call, std::size_t items) {
  Chain& chain = chains_[static_cast<std::size_t>(kind)];
  for (std::size_t item = 0; item < items; ++item) chain.waiting.push_back(Token{&call, item});
  admit(kind);
}

void InlineGraphRunner::admit(PipelineKind kind) {
  Chain& chain = chains_[static_cast<std::size_t>(kind)];
  while (!chain.waiting.empty()) {
    const Token token = chain.waiting.front();
    const CollectiveSettings& settings = *token.call->operation().request().settings;
    const std::size_t limit = pipeline_limit(kind, settings.buffers_in_flight,
                                             static_cast<int>(settings.aggregator_ranks.size()));
    // Serial pipelines need nothing more: one thread runs every stage, and
    // stages that may go on queue up in the order they were let.
    if (limit > 0 && chain.inside >= limit) return;
    chain.waiting.pop_front();
    ++chain.inside;
    ready_.push_back(Step{kind, 0, token});
  }
}

void InlineGraphRunner::run(Step step) {
  while (true) {
    const Pipeline& definition = pipeline(step.kind);
    if (step.stage == definition.stages.size()) {
      --chains_[static_cast<std::size_t>(step.kind)].inside;
      admit(step.kind);
      definition.leave(*step.token.call);
      return;
    }
    std::size_t slot = parked_.size();
    if (free_slots_.empty()) {
      parked_.push_back(Step{step.kind, step.stage + 1, step.token});
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      parked_[slot] = Step{step.kind, step.stage + 1, step.token};
    }
    running_slot_ = slot;
    went_on_ = false;
    definition.stages[step.stage](step.token.call->operation(), step.token.item,
                                  Next(go_on, this, slot));
    running_slot_ = kNoSlot;
    if (!went_on_) return;
    step = parked_[slot];
    free_slots_.push_back(slot);
  }
}

void InlineGraphRunner::go_on(void* runner, std::uintptr_t slot) {
  static_cast<InlineGraphRunner*>(runner)->go_on(static_cast<std::size_t>(slot));
}

void InlineGraphRunner::go_on(std::size_t slot) {
  // Before its stage returned (most stages of a small call): the item goes
  // straight on, in the loop, instead of through the queue.
  if (slot == running_slot_) {
    went_on_ = true;
    return;
  }
  ready_.push_back(parked_[slot]);
  free_slots_.push_back(slot);
}

void InlineGraphRunner::drive(const std::function<bool()>& done) {
  // When the runner last found something to do; read only once it finds
  // nothing (a call that never waits reads no clock here).
  std::int64_t quiet_since = -1;
  while (!done()) {
    if (!ready_.empty()) {
      const Step next = ready_.front();
      ready_.pop_front();
      run(next);
      quiet_since = -1;
      continue;
    }
    if (executor_.test()) {
      quiet_since = -1;
      continue;
    }
    const std::int64_t now = now_ns();
    if (quiet_since < 0) quiet_since = now;
    const std::int64_t pause_ns = Backoff::pause_ns(now - quiet_since);
    if (pause_ns > 0) Backoff::pause(pause_ns);
  }
}

}  // namespace flowio::runtime
