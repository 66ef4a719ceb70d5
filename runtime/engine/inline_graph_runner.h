// InlineGraphRunner: a blocking collective call alone on its file, run
// through the same pipelines (pipelines.h) on the caller's thread.
// Stages that wait leave their requests with an InlineExecutor; when no
// stage can run, the caller tests those requests (with the back-off of
// backoff.h) and the items they release go on. Nothing is handed to
// another thread, so a small call costs its stages and its messages only.
//
// Items pass their pipelines within the same limits as in the background,
// and every wait is nonblocking, so a process never sits in one stage
// while its partners wait for its next message.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "runtime/engine/executors.h"
#include "runtime/engine/graph_runner.h"

namespace flowio::runtime {

// Used by one thread at a time (the file's caller).
class InlineGraphRunner final : public GraphRunner {
 public:
  void enqueue(PipelineKind kind, CollectiveCall& call, std::size_t items) override;
  Executor& executor() override { return executor_; }

  // Runs stages until `done()` is true.
  void drive(const std::function<bool()>& done);

 private:
  struct Token {
    CollectiveCall* call = nullptr;
    std::size_t item = 0;
  };
  struct Chain {
    std::deque<Token> waiting;  // not yet admitted
    std::size_t inside = 0;     // admitted, not yet left
  };
  // An item about to run stage `stage` of pipeline `kind`.
  struct Step {
    PipelineKind kind;
    std::size_t stage;
    Token token;
  };

  // How many items of `kind` may be inside at once for `call` (0: any).
  static std::size_t limit_of(PipelineKind kind, CollectiveCall& call);
  // Lets waiting items of `kind` in, within its limit.
  void admit(PipelineKind kind);
  // Runs the item's stages for as long as each finishes before it returns.
  void run(Step step);
  // A stage's `next`: the item parked in `slot` goes on.
  static void go_on(void* runner, std::uintptr_t slot);
  void go_on(std::size_t slot);

  std::array<Chain, static_cast<std::size_t>(PipelineKind::count)> chains_;
  std::deque<Step> ready_;  // steps whose items may go on
  // Steps whose stage waits: a stage's `next` names its slot.
  std::vector<Step> parked_;
  std::vector<std::size_t> free_slots_;
  static constexpr std::size_t kNoSlot = static_cast<std::size_t>(-1);
  std::size_t running_slot_ = kNoSlot;  // the slot of the stage run() is in
  bool went_on_ = false;                // that stage called its next already
  InlineExecutor executor_;
};

}  // namespace flowio::runtime
