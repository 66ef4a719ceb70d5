// What the multi-rank lock tests share: the runtime that waits for the
// locks, the list of locks to test, collective checks, and counters in
// shared memory that see who is inside a locked region at the same time.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/engine/engine.h"
#include "runtime/engine/lock_progress.h"
#include "sync/lock.h"
#include "sync/lock_settings.h"
#include "tests/support/world.h"

namespace flowio::testing {

// A path under the test's scratch directory ($TEST_TMPDIR under Bazel),
// the same on every rank.
inline std::string scratch_path(const std::string& name) {
  const char* directory = std::getenv("TEST_TMPDIR");
  if (directory == nullptr) directory = std::getenv("TMPDIR");
  if (directory == nullptr) directory = "/tmp";
  return std::string(directory) + "/" + name + "." + std::to_string(world_size()) + "ranks";
}

// scratch_path(name), created (empty) by rank 0 if missing, before any
// rank returns: fcntl locks open the file. Collective.
inline std::string lock_file(const std::string& name) {
  const std::string path = scratch_path(name);
  if (world_rank() == 0) std::fclose(std::fopen(path.c_str(), "a"));
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// The process's engine, whose progress thread the locks wait on.
struct LockRuntime {
  std::shared_ptr<runtime::Engine> engine = runtime::Engine::acquire();
  runtime::LockProgress port{engine->progress()};
};

// Every lock atomic mode can use: each algorithm, whole-file and ranges.
inline std::vector<sync::LockSettings> every_lock() {
  std::vector<sync::LockSettings> locks;
  for (const auto algorithm : {sync::LockAlgorithm::hybrid, sync::LockAlgorithm::one_sided,
                               sync::LockAlgorithm::mcs, sync::LockAlgorithm::fcntl}) {
    for (const bool ranges : {false, true}) locks.push_back(sync::LockSettings{algorithm, ranges});
  }
  return locks;
}

// every_lock(), but without fcntl when FLOWIO_LOCK_WINDOWS=mpi makes the
// run one of flowio's locks over MPI one-sided operations (fcntl locks have
// no windows: that run would repeat the other's).
inline std::vector<sync::LockSettings> locks_under_test() {
  const char* windows = std::getenv("FLOWIO_LOCK_WINDOWS");
  if (windows == nullptr || std::string(windows) != "mpi") return every_lock();
  std::vector<sync::LockSettings> locks;
  for (const sync::LockSettings& settings : every_lock()) {
    if (settings.algorithm != sync::LockAlgorithm::fcntl) locks.push_back(settings);
  }
  return locks;
}

// Each algorithm once, both granularities among them: for tests whose
// subject is not the algorithm but how a lock is used (each lock made and
// closed costs collective steps).
inline std::vector<sync::LockSettings> each_algorithm() {
  return {sync::LockSettings{sync::LockAlgorithm::hybrid, true},
          sync::LockSettings{sync::LockAlgorithm::one_sided, false},
          sync::LockSettings{sync::LockAlgorithm::mcs, false},
          sync::LockSettings{sync::LockAlgorithm::fcntl, true}};
}

// Only flowio's own locks, which promise fairness (Linux's fcntl locks do
// not).
inline std::vector<sync::LockSettings> flowio_locks() {
  std::vector<sync::LockSettings> locks;
  for (const sync::LockSettings& settings : every_lock()) {
    if (settings.algorithm != sync::LockAlgorithm::fcntl) locks.push_back(settings);
  }
  return locks;
}

inline std::string describe(const sync::LockSettings& settings) {
  return std::string(sync::lock_algorithm_name(settings.algorithm)) +
         (settings.ranges ? "_ranges" : "_whole");
}

// Counters every rank of the (single-node) job updates with atomic
// instructions, in memory shared through MPI_Win_allocate_shared; they
// need no lock and no MPI call, so they observe the locks from outside.
class SharedCounters {
 public:
  // Collective over MPI_COMM_WORLD.
  explicit SharedCounters(int count) {
    const MPI_Aint bytes =
        world_rank() == 0 ? count * static_cast<MPI_Aint>(sizeof(std::int64_t)) : 0;
    void* base = nullptr;
    MPI_Win_allocate_shared(bytes, sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &window_);
    MPI_Aint size = 0;
    int unit = 0;
    MPI_Win_shared_query(window_, 0, &size, &unit, &base);
    counters_ = static_cast<std::int64_t*>(base);
    if (world_rank() == 0) {
      for (int i = 0; i < count; ++i) counters_[i] = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // Collective.
  ~SharedCounters() { MPI_Win_free(&window_); }
  SharedCounters(const SharedCounters&) = delete;
  SharedCounters& operator=(const SharedCounters&) = delete;

  // Adds `delta` to counter `index` and returns the new value. Sequentially
  // consistent: the checks compare counters that different processes
  // change.
  std::int64_t add(int index, std::int64_t delta) {
    return std::atomic_ref<std::int64_t>(counters_[index]).fetch_add(delta) + delta;
  }
  std::int64_t load(int index) { return std::atomic_ref<std::int64_t>(counters_[index]).load(); }

 private:
  MPI_Win window_ = MPI_WIN_NULL;
  std::int64_t* counters_ = nullptr;
};

}  // namespace flowio::testing
