#include "runtime/engine/tbb_graph_runner.h"

#include <cstdint>
#include <memory>

#include "runtime/engine/collective_call.h"
#include "runtime/engine/engine.h"

namespace flowio::runtime {

namespace flow = tbb::flow;

namespace {

// A stage's `next` in the graph: the item and the node it leaves, kept
// until the stage lets it go on (possibly from another thread: the
// progress engine or the I/O thread).
struct Resumption {
  GraphToken token;
  flow::async_node<GraphToken, GraphToken>::gateway_type& gateway;
};

void go_on(void* context, std::uintptr_t) {
  const std::unique_ptr<Resumption> resumption(static_cast<Resumption*>(context));
  resumption->gateway.try_put(resumption->token);
  resumption->gateway.release_wait();
}

}  // namespace

TbbGraphRunner::TbbGraphRunner(Engine& engine, int buffers_in_flight, int aggregators)
    : engine_(engine),
      buffers_in_flight_(buffers_in_flight),
      aggregators_(aggregators),
      executor_(engine.progress(), engine.io()) {
  // A graph runs its tasks in the arena it was built in.
  engine_.arena().execute([&] {
    graph_ = std::make_unique<flow::graph>();
    for (int kind = 0; kind < static_cast<int>(PipelineKind::count); ++kind) {
      build(static_cast<PipelineKind>(kind));
    }
  });
}

TbbGraphRunner::~TbbGraphRunner() {
  engine_.arena().execute([&] { graph_->wait_for_all(); });
}

void TbbGraphRunner::build(PipelineKind kind) {
  const Pipeline& definition = pipeline(kind);
  Chain& chain = chains_[static_cast<std::size_t>(kind)];
  flow::graph& graph = *graph_;
  chain.queue = std::make_unique<flow::queue_node<Token>>(graph);
  const std::size_t limit = pipeline_limit(kind, buffers_in_flight_, aggregators_);
  if (limit > 0) {
    chain.limiter = std::make_unique<flow::limiter_node<Token>>(graph, limit);
    flow::make_edge(*chain.queue, *chain.limiter);
  }
  for (StageBody body : definition.stages) {
    chain.stages.push_back(std::make_unique<StageNode>(
        graph, definition.serial ? flow::serial : flow::unlimited,
        [body](const Token& token, StageNode::gateway_type& gateway) {
          // Held until the stage lets the item go on.
          gateway.reserve_wait();
          body(token.call->operation(), token.item, Next(go_on, new Resumption{token, gateway}));
        }));
  }
  const auto leave = definition.leave;
  chain.leave = std::make_unique<flow::function_node<Token, flow::continue_msg>>(
      graph, flow::unlimited, [leave](const Token& token) {
        leave(*token.call);
        return flow::continue_msg();
      });
  if (chain.limiter) {
    flow::make_edge(*chain.limiter, *chain.stages.front());
    flow::make_edge(*chain.leave, chain.limiter->decrementer());
  } else {
    flow::make_edge(*chain.queue, *chain.stages.front());
  }
  for (std::size_t s = 0; s < chain.stages.size(); ++s) {
    flow::receiver<Token>& after = s + 1 < chain.stages.size()
                                       ? static_cast<flow::receiver<Token>&>(*chain.stages[s + 1])
                                       : *chain.leave;
    if (!definition.serial) {
      flow::make_edge(*chain.stages[s], after);
      continue;
    }
    chain.in_order.push_back(std::make_unique<flow::sequencer_node<Token>>(
        graph, [](const Token& token) { return static_cast<std::size_t>(token.sequence); }));
    flow::make_edge(*chain.stages[s], *chain.in_order.back());
    flow::make_edge(*chain.in_order.back(), after);
  }
}

void TbbGraphRunner::enqueue(PipelineKind kind, CollectiveCall& call, std::size_t items) {
  Chain& chain = chains_[static_cast<std::size_t>(kind)];
  if (!pipeline(kind).serial) {
    for (std::size_t item = 0; item < items; ++item) {
      chain.queue->try_put(Token{&call, item});
    }
    return;
  }
  // Numbered in the order the items enter, which every sequencer keeps.
  std::lock_guard lock(chain.entering);
  for (std::size_t item = 0; item < items; ++item) {
    chain.queue->try_put(Token{&call, item, chain.entered++});
  }
}

}  // namespace flowio::runtime
