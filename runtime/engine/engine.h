// Engine: the worker threads that run flowio operations in the background.
//
// One Engine serves all files of a process. It starts with the first open
// and lives until MPI_Finalize (an attribute of MPI_COMM_SELF, whose delete
// callback MPI runs at the start of MPI_Finalize, lets go of it), or until
// the last file that still holds it is closed after that: opening and
// closing files costs no thread start or stop. Its threads never outlive
// the process's static destruction. Workers are oneTBB threads: they sleep
// when there is no work. The progress thread (progress.h) and the I/O
// thread (io_service.h) live as long as the engine and sleep when idle.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "runtime/engine/io_service.h"
#include "runtime/engine/progress.h"

namespace flowio::runtime {

// Thread safety: submit() may be called from any thread.
class Engine {
 public:
  // The process's engine, started on first use. Throws UsageError(unsupported)
  // unless MPI is initialized with MPI_THREAD_MULTIPLE, which flowio needs
  // because its threads call MPI and MPICH is thread-safe only at that level.
  static std::shared_ptr<Engine> acquire();
  // Lets go of the process's own reference (what MPI_Finalize does through
  // the MPI_COMM_SELF attribute): the engine stops once no file holds it.
  // The MPI-IO layer calls it before MPI_Finalize, after closing the files
  // the program left open. acquire() afterwards starts a new engine.
  static void release();

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
