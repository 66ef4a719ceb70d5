// TbbGraphRunner: a file's collective pipelines (pipelines.h) as
// one oneTBB flow graph, built once per file and shared by all its
// operations in the background. Each pipeline is a queue, a limiter where
// the pipeline is bounded, one async_node per stage (a stage calls its
// gateway when the item may go on, so that waits for MPI or the file never
// hold a worker) and a node that lets the item leave. Messages name the
// operation and the item, so several operations' items flow at once.
//
// Items enter the queues in the order their operations' data phases
// start, the same on every process; with bounded pipelines that order is
// what rules out deadlock (operation_order.h).
#pragma once

#include <oneapi/tbb/flow_graph.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/engine/executors.h"
#include "runtime/engine/graph_runner.h"

namespace flowio::runtime {

class Engine;

// What travels through the graph: an item of a call.
struct GraphToken {
  CollectiveCall* call = nullptr;
  std::size_t item = 0;        // the stages' index, of any magnitude (not 32 bits)
  std::uint64_t sequence = 0;  // order of entry into a serial pipeline
};

// Thread safety: enqueue() may be called from any thread.
class TbbGraphRunner final : public GraphRunner {
 public:
  // Builds the graph inside the engine's arena, with the limits of
  // pipeline_limit(). `buffers_in_flight` and `aggregators` are kept.
  TbbGraphRunner(Engine& engine, int buffers_in_flight, int aggregators);
  // Waits for everything in the graph.
  ~TbbGraphRunner() override;
  TbbGraphRunner(const TbbGraphRunner&) = delete;
  TbbGraphRunner& operator=(const TbbGraphRunner&) = delete;

  void enqueue(PipelineKind kind, CollectiveCall& call, std::size_t items) override;
  Executor& executor() override { return executor_; }

  int buffers_in_flight() const { return buffers_in_flight_; }
  int aggregators() const { return aggregators_; }

 private:
  using Token = GraphToken;
  using StageNode = tbb::flow::async_node<Token, Token>;
  struct Chain {
    std::unique_ptr<tbb::flow::queue_node<Token>> queue;
    std::unique_ptr<tbb::flow::limiter_node<Token>> limiter;
    std::vector<std::unique_ptr<StageNode>> stages;
    // Serial pipelines: after each stage, the items back in entry order.
    std::vector<std::unique_ptr<tbb::flow::sequencer_node<Token>>> in_order;
    std::unique_ptr<tbb::flow::function_node<Token, tbb::flow::continue_msg>> leave;
    std::mutex entering;  // serial pipelines: numbers and enqueues together
    std::uint64_t entered = 0;
  };

  void build(PipelineKind kind);

  Engine& engine_;
  const int buffers_in_flight_;
  const int aggregators_;
  BackgroundExecutor executor_;
  // The graph first: the nodes are destroyed before it.
  std::unique_ptr<tbb::flow::graph> graph_;
  std::array<Chain, static_cast<std::size_t>(PipelineKind::count)> chains_;
};

}  // namespace flowio::runtime
