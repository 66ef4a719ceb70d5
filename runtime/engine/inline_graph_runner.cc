#include "runtime/engine/inline_graph_runner.h"

#include <algorithm>

#include "runtime/engine/backoff.h"
#include "runtime/engine/clock.h"
#include "runtime/engine/collective_call.h"

namespace flowio::runtime {

void InlineGraphRunner::enqueue(PipelineKind kind, CollectiveCall& call, std::size_t items) {
  Chain& chain = chains_[static_cast<std::size_t>(kind)];
  const std::size_t limit = limit_of(kind, call);
  for (std::size_t item = 0; item < items; ++item) {
    // Straight in while nothing waits before it and there is room.
    if (chain.waiting.empty() && (limit == 0 || chain.inside < limit)) {
      ++chain.inside;
      ready_.push_back(Step{kind, 0, Token{&call, item}});
    } else {
      chain.waiting.push_back(Token{&call, item});
    }
  }
}

std::size_t InlineGraphRunner::limit_of(PipelineKind kind, CollectiveCall& call) {
  const CollectiveSettings& settings = *call.operation().request().settings;
  // Serial pipelines need none: one thread runs every stage, and stages
  // that may go on queue up in the order they were let.
  return pipeline_limit(kind, settings.buffers_in_flight,
                        static_cast<int>(settings.aggregator_ranks.size()));
}

void InlineGraphRunner::admit(PipelineKind kind) {
  Chain& chain = chains_[static_cast<std::size_t>(kind)];
  while (!chain.waiting.empty()) {
    const Token token = chain.waiting.front();
    const std::size_t limit = limit_of(kind, *token.call);
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
    // The slot the item parks in if its stage returns before it goes on;
    // taken only then (most stages of a small call go on at once).
    const std::size_t slot = free_slots_.empty() ? parked_.size() : free_slots_.back();
    running_slot_ = slot;
    went_on_ = false;
    definition.stages[step.stage](step.token.call->operation(), step.token.item,
                                  Next(go_on, this, slot));
    running_slot_ = kNoSlot;
    ++step.stage;
    if (went_on_) continue;
    if (slot == parked_.size()) {
      parked_.push_back(step);
    } else {
      // Still free, though maybe no longer last: a stage may let another
      // item go on before it returns.
      std::iter_swap(std::find(free_slots_.begin(), free_slots_.end(), slot),
                     free_slots_.end() - 1);
      free_slots_.pop_back();
      parked_[slot] = step;
    }
    return;
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
