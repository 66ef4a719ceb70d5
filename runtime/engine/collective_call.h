// CollectiveCall: one collective call from its start to its completion:
// the operation its stages work on, the runner that runs them (chosen at
// the start), and where its result goes: the future of a nonblocking
// call, or the caller of a blocking one.
//
// Every call, blocking or not, on any number of processes, goes the same
// way: start() or run() takes its turn (OperationOrder::begin), makes the
// operation and has the runner run its stages (pipelines.h); when it
// leaves the agreement, complete() records its statistics, ends its turn
// and delivers its result. complete() is the only code that completes a
// collective operation: it is private, and complete_call() is its only
// caller, called only by the pipelines (pipelines.cc) as the call leaves
// the agreement, or control when its gather settled it. Before that, where
// the data phase ends on this process, the pipelines tell the request's
// on_memory_released (collective_request.h): a notification that the
// caller's memory is free, which completes nothing.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

#include "flowio/future.h"
#include "runtime/stages/collective_request.h"
#include "runtime/stages/operation.h"

namespace flowio::runtime {

class CollectiveContext;
class GraphRunner;
class CollectiveCall;

// Completes `call` (pipelines.cc: leaving the agreement, or control).
void complete_call(CollectiveCall& call);

class CollectiveCall {
 public:
  // Starts the call on the caller's thread and returns its future; the
  // call keeps itself alive until it completes. Throws only what keeps
  // the operation from starting (MPI refusing to post its announcement);
  // `on_done` does not run then (on_memory_released has run).
  static Future<std::size_t> start(CollectiveContext& context, CollectiveRequest request,
                                   std::function<void()> on_done);
  // A blocking call (request.blocking): runs it to completion, on this
  // thread when it is alone on its file, and returns what start()'s
  // future would hold, its failure in `failure`. Throws as start() does.
  static std::size_t run(CollectiveContext& context, CollectiveRequest&& request,
                         std::function<void()>&& on_done, std::exception_ptr& failure);

  // Use start() or run(); public for the allocator.
  CollectiveCall(CollectiveContext& context, CollectiveRequest&& request, std::uint64_t sequence,
                 bool run_inline, std::function<void()>&& on_done);
  CollectiveCall(const CollectiveCall&) = delete;
  CollectiveCall& operator=(const CollectiveCall&) = delete;

  Operation& operation() { return operation_; }
  GraphRunner& runner() { return runner_; }
  CollectiveContext& context() { return context_; }

 private:
  // pipelines.cc's leaving of the agreement or of control.
  friend void complete_call(CollectiveCall& call);

  // Takes the call's turn and makes it; the call holds itself until
  // complete(), unless it runs inline (run() holds it). It runs inline
  // when `caller_waits` (run(), which drives it) and it is alone on its
  // file; the only place that decides.
  static std::shared_ptr<CollectiveCall> make(CollectiveContext& context,
                                              CollectiveRequest&& request,
                                              std::function<void()>&& on_done, bool caller_waits);
  // Runs its stage at the call and sends it on.
  void launch();
  // The end: statistics, the turn, the result, `on_done`. Called once.
  void complete();

  CollectiveContext& context_;
  GraphRunner& runner_;
  Operation operation_;
  // Where complete() leaves the result: the promise of start(), or, for
  // run() on this thread, the three fields after it.
  std::optional<Promise<std::size_t>> promise_;
  bool done_ = false;
  std::size_t moved_ = 0;
  std::exception_ptr result_;
  std::function<void()> on_done_;
  // Alive until complete() (a call run inline: while run() holds it).
  std::shared_ptr<CollectiveCall> self_;
};

}  // namespace flowio::runtime
