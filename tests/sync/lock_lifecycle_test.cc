// Locks in use the way atomic mode uses them: several threads of each
// process at once, several locks in flight, a process that closes while
// others still wait, and failures inside a locked region.
#include <doctest/doctest.h>
#include <mpi.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "flowio/error.h"
#include "sync/lock_settings.h"
#include "tests/sync/lock_test_support.h"

using namespace flowio;
using namespace flowio::testing;

namespace {

constexpr int kThreads = 4;
constexpr int kRoundsPerThread = 25;

}  // namespace

// Four threads per process increment a shared-memory counter (non-atomic
// read, then write) under the lock: threads of one process exclude each
// other as processes do, and no increment is lost.
TEST_CASE("Sync.Lifecycle.ThreadsOfOneProcess") {
  LockRuntime runtime;
  SharedCounters counter(2);  // 0: the counter, 1: threads inside
  for (sync::LockSettings settings : each_algorithm()) {
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("threads"), runtime.port);
    std::vector<std::thread> threads;
    std::atomic<int> overlaps{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int round = 0; round < kRoundsPerThread; ++round) {
          sync::Lease lease = lock->acquire({0, 8}, sync::LockMode::exclusive).get();
          if (counter.add(1, 1) != 1) ++overlaps;
          const std::int64_t value = counter.load(0);
          std::this_thread::yield();
          counter.add(0, value + 1 - counter.load(0));
          counter.add(1, -1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    lock->close();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(overlaps.load() == 0);
    CHECK(counter.load(0) == static_cast<std::int64_t>(world_size()) * kThreads * kRoundsPerThread);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) counter.add(0, -counter.load(0));
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// Two locks over the same processes, held at once: every process takes
// both (the first asked before the second, without waiting in between)
// and gives them back in either order.
TEST_CASE("Sync.Lifecycle.SeveralLocksInFlight") {
  LockRuntime runtime;
  SharedCounters inside(3);  // 0, 1: holders of lock a, b; 2: violations
  for (sync::LockSettings settings : each_algorithm()) {
    if (settings.algorithm == sync::LockAlgorithm::fcntl) continue;  // covered by the others
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> a =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("lock_a"), runtime.port);
    std::unique_ptr<sync::Lock> b =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("lock_b"), runtime.port);
    for (int round = 0; round < 10; ++round) {
      Future<sync::Lease> first = a->acquire({0, 8}, sync::LockMode::exclusive);
      sync::Lease held_a = first.get();
      Future<sync::Lease> second = b->acquire({0, 8}, sync::LockMode::exclusive);
      sync::Lease held_b = second.get();
      if (inside.add(0, 1) != 1) inside.add(2, 1);
      if (inside.add(1, 1) != 1) inside.add(2, 1);
      inside.add(0, -1);
      inside.add(1, -1);
      if (round % 2 == 0) {
        held_a.release();
        held_b.release();
      } else {
        held_b.release();
        held_a.release();
      }
    }
    b->close();
    a->close();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(inside.load(2) == 0);
  }
}

// The last rank holds the lock while the others queue for it; it lets go
// and closes at once. Every waiter still gets the lock (the hand-off is
// not lost) and every close returns (nobody deadlocks).
TEST_CASE("Sync.Lifecycle.CloseWhileOthersWait") {
  const int holder = world_size() - 1;
  LockRuntime runtime;
  SharedCounters granted(1);
  for (sync::LockSettings settings : each_algorithm()) {
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("closing"), runtime.port);
    sync::Lease held;
    if (world_rank() == holder) held = lock->acquire({0, 8}, sync::LockMode::exclusive).get();
    MPI_Barrier(MPI_COMM_WORLD);
    Future<sync::Lease> waiting;
    if (world_rank() != holder) waiting = lock->acquire({0, 8}, sync::LockMode::exclusive);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (world_rank() == holder) {
      held.release();
      granted.add(0, 1);
    } else {
      sync::Lease mine = waiting.get();
      granted.add(0, 1);
    }
    lock->close();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(granted.load(0) == world_size());
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) granted.add(0, -granted.load(0));
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// An exception thrown inside the locked region releases the lease on its
// way out, so the other processes get the lock; closing a lock while
// holding a lease is refused.
TEST_CASE("Sync.Lifecycle.FailureInsideReleases") {
  LockRuntime runtime;
  for (sync::LockSettings settings : each_algorithm()) {
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("failing"), runtime.port);
    if (world_rank() == 0) {
      CHECK_THROWS_AS(
          {
            sync::Lease lease = lock->acquire({0, 8}, sync::LockMode::exclusive).get();
            throw std::runtime_error("failure inside the locked region");
          },
          std::runtime_error);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
      sync::Lease lease = lock->acquire({0, 8}, sync::LockMode::exclusive).get();
      CHECK(lease.held());
      CHECK_THROWS_AS(lock->close(), UsageError);
    }
    lock->close();
  }
}
