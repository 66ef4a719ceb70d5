// Engine: the worker threads that run flowio operations in the background.
//
// One Engine serves all files of a process; every open file holds a
// reference, so the threads start with the first open and stop when the
// last file closes (never at static destruction, after MPI_Finalize).
// Workers are oneTBB threads: they sleep when there is no work. The
// progress thread (progress.h) lives as long as the engine.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "runtime/io_service.h"
#include "runtime/progress.h"

namespace flowio::runtime {

// Thread safety: submit() may be called from any thread.
class Engine {
 public:
  // The process's engine, started on first use. Throws UsageError(unsupported)
  // unless MPI is initialized with MPI_THREAD_MULTIPLE, which flowio needs
  // because its threads call MPI and MPICH is thread-safe only at that level.
  static std::shared_ptr<Engine> acquire();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  // Waits for every submitted task.
  ~Engine();

  // Runs `task` on a worker thread. The task must not throw: operations
  // report failures through their promises.
  void submit(std::function<void()> task);

  // The process's progress thread, which drives MPI requests.
  Progress& progress() { return progress_; }
  // The process's I/O thread, which performs aggregators' file I/O.
  IoService& io() { return io_; }
  // The arena of the worker threads: flow graphs built inside it run their
  // tasks there.
  tbb::task_arena& arena() { return arena_; }

 private:
  Engine();

  // Declared first: destroyed last, after every task has finished.
  Progress progress_;
  IoService io_;
  tbb::task_arena arena_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t running_ = 0;  // tasks submitted and not yet finished
};

// Throws UsageError(unsupported) with advice unless MPI is initialized (and
// not finalized) with MPI_THREAD_MULTIPLE.
void require_thread_multiple();

}  // namespace flowio::runtime
