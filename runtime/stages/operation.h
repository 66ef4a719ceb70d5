// Operation: one process's part of one collective call, as its stages see
// it: what was fixed at the call (the request, the file, its sequence
// number, where its stages wait), the one channel through which its
// failures travel, its statistics, and the data of the phase it is in
// (operation_phases.h), which only the stages of that phase touch.
//
// What starts, runs and completes an operation (its future, its turn at
// the file's ordering) is the engine's (engine/collective_call.h); nothing
// here completes one.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <variant>

#include "runtime/engine/message_tags.h"
#include "runtime/stages/collective_request.h"
#include "runtime/stages/executor.h"
#include "runtime/stages/file_context.h"
#include "runtime/stages/operation_phases.h"
#include "runtime/stages/operation_recorder.h"

namespace flowio::runtime {

// Thread safety: the fixed parts, fail(), failure(), failed() and the
// recorder may be used from any thread; the phase's data by its stages as
// operation_phases.h says.
class Operation {
 public:
  // `runs_inline`: the caller waits for it on its thread, which runs every
  // stage (the executor is then the caller's own).
  Operation(FileContext& file, CollectiveRequest&& request, std::uint64_t sequence,
            bool runs_inline, Executor& executor, std::int64_t started_ns);
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  FileContext& file() const { return file_; }
  const CollectiveRequest& request() const { return request_; }
  std::uint64_t sequence() const { return sequence_; }
  // The tag of this operation's messages of `kind` (`index`: a window's).
  int tag(MessageKind kind, std::int64_t index = 0) const {
    return message_tag(kind, sequence_, index);
  }
  bool runs_inline() const { return runs_inline_; }
  // Where the stages wait for MPI and hand file I/O.
  Executor& executor() const { return executor_; }
  std::int64_t started_ns() const { return started_ns_; }
  OperationRecorder& recorder() { return recorder_; }

  // A failure of this process's part, in `stage` (a name such as "pack",
  // or null when no stage applies). The first one is kept; it reaches every
  // process through the outcome agreement, naming the stage. Thread safe.
  void fail(std::exception_ptr failure, const char* stage);
  std::exception_ptr failure() const;
  // Whether fail() was called (without copying the failure).
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The stage of the first failure, or null.
  const char* failed_stage() const;
  // Runs `body`, keeping what it throws as the operation's failure (in
  // `stage`), so that every process goes through the whole protocol and
  // none waits forever.
  template <typename Body>
  void guarded(Body&& body, const char* stage) {
    try {
      body();
    } catch (...) {
      fail(std::current_exception(), stage);
    }
  }

  // The data phase on this process is over, or there will be none: calls
  // the request's on_memory_released, the first time only. Called by the
  // runner where the data phase ends (engine/pipelines.cc), never by a
  // stage. Thread safe.
  void release_memory();

  // Compression statistics of the operation's messages, summed. Thread safe.
  void add_compression(const CompressionStatistics& statistics);
  // The sum, or null when no message was framed.
  std::unique_ptr<CompressionStatistics> compression_statistics() const;

  // The data of the phase the operation is in; `Phase` must be it.
  template <typename Phase>
  Phase& phase() {
    assert(std::holds_alternative<Phase>(phases_[current_]) && "a stage of another phase");
    return *std::get_if<Phase>(&phases_[current_]);
  }
  template <typename Phase>
  bool in() const {
    return std::holds_alternative<Phase>(phases_[current_]);
  }
  // Ends phase `Old`, which the operation is in, and begins `Phase`, made
  // from the old one's data (nothing of it may be in flight: its buffers
  // move) and `arguments`. Returns the new phase's data.
  template <typename Phase, typename Old, typename... Arguments>
  Phase& begin_phase(Arguments&&... arguments) {
    // Made in the other slot straight from the old phase, which is then
    // destroyed: the members handed on move once.
    auto& next = phases_[1 - current_];
    Phase& made = next.template emplace<Phase>(std::move(phase<Old>()),
                                               std::forward<Arguments>(arguments)...);
    phases_[current_].template emplace<std::monostate>();
    current_ = 1 - current_;
    return made;
  }

 private:
  FileContext& file_;
  const CollectiveRequest request_;
  const std::uint64_t sequence_;
  const bool runs_inline_;
  Executor& executor_;
  const std::int64_t started_ns_;
  OperationRecorder recorder_;

  mutable std::mutex mutex_;  // failure_, failed_stage_, compression_
  std::exception_ptr failure_;
  const char* failed_stage_ = nullptr;
  std::atomic<bool> failed_{false};  // failure_ is set
  std::unique_ptr<CompressionStatistics> compression_;
  std::atomic<bool> compressed_{false};       // compression_ is set
  std::atomic<bool> memory_released_{false};  // release_memory() was called

  // The phase the operation is in, phases_[current_], and the slot the
  // next one is made in (empty between transitions).
  using PhaseSlot = std::variant<std::monostate, Announcing, Planning, Moving, Agreeing>;
  PhaseSlot phases_[2]{PhaseSlot(std::in_place_type<Announcing>), PhaseSlot()};
  int current_ = 0;
};

}  // namespace flowio::runtime
