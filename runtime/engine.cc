#include "runtime/engine.h"

#include <mpi.h>

#include <mutex>

#include "flowio/error.h"

namespace flowio::runtime {

void require_thread_multiple() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw UsageError(ErrorCode::unsupported,
                     "flowio needs MPI to be initialized (and not finalized)");
  }
  int provided = MPI_THREAD_SINGLE;
  // The profiling entry point: the MPI-IO layer reports the level the
  // program asked for through MPI_Query_thread, not the one MPI runs at.
  check_mpi(PMPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided < MPI_THREAD_MULTIPLE) {
    throw UsageError(ErrorCode::unsupported,
                     "flowio needs MPI_THREAD_MULTIPLE: initialize MPI with "
                     "MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)");
  }
}

std::shared_ptr<Engine> Engine::acquire() {
  require_thread_multiple();
  static std::mutex mutex;
  static std::weak_ptr<Engine> current;
  std::lock_guard lock(mutex);
  std::shared_ptr<Engine> engine = current.lock();
  if (!engine) {
    engine = std::shared_ptr<Engine>(new Engine());
    current = engine;
  }
  return engine;
}

Engine::Engine() : arena_(tbb::task_arena::automatic) {}

Engine::~Engine() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return running_ == 0; });
}

void Engine::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    ++running_;
  }
  // enqueue, not execute: the caller must never be drafted into running
  // someone else's I/O.
  arena_.enqueue([this, task = std::move(task)] {
    task();
    std::lock_guard lock(mutex_);
    if (--running_ == 0) idle_.notify_all();
  });
}

}  // namespace flowio::runtime
