#include "runtime/engine/engine.h"

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

namespace {

// The process's reference to its engine, and the one to hand out while it
// lives. Never destroyed (the engine is let go at MPI_Finalize, not at
// static destruction, when MPI may be gone).
struct ProcessEngine {
  std::mutex mutex;
  std::shared_ptr<Engine> kept;
  std::weak_ptr<Engine> current;
  bool finalize_hook = false;
};

ProcessEngine& process_engine() {
  static auto* instance = new ProcessEngine();
  return *instance;
}

// MPI runs the delete callbacks of MPI_COMM_SELF's attributes first thing
// in MPI_Finalize, while MPI still works: the engine's threads (idle by
// then, as every operation has completed) stop there.
int release_at_finalize(MPI_Comm, int, void*, void*) {
  Engine::release();
  return MPI_SUCCESS;
}

}  // namespace

std::shared_ptr<Engine> Engine::acquire() {
  require_thread_multiple();
  ProcessEngine& process = process_engine();
  std::lock_guard lock(process.mutex);
  std::shared_ptr<Engine> engine = process.current.lock();
  if (!engine) {
    engine = std::shared_ptr<Engine>(new Engine());
    process.current = engine;
  }
  if (!process.kept) {
    if (!process.finalize_hook) {
      int keyval = MPI_KEYVAL_INVALID;
      check_mpi(
          MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_at_finalize, &keyval, nullptr),
          "MPI_Comm_create_keyval");
      check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr), "MPI_Comm_set_attr");
      process.finalize_hook = true;
    }
    process.kept = engine;
  }
  return engine;
}

void Engine::release() {
  std::shared_ptr<Engine> letting_go;
  {
    ProcessEngine& process = process_engine();
    std::lock_guard lock(process.mutex);
    letting_go = std::move(process.kept);
  }
  // Destroyed here, outside the lock, if no file holds it.
}

Engine::Engine() : io_(progress_), arena_(tbb::task_arena::automatic) {}

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
