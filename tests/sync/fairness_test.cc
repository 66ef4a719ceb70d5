// Fairness: with every process asking for the lock again as soon as it
// lets go, each waiter gets it within a bounded number of hand-offs, for
// each of flowio's locks (Linux's fcntl locks promise no order and are
// left out).
#include <doctest/doctest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "sync/lock_settings.h"
#include "tests/sync/lock_test_support.h"

using namespace flowio;
using namespace flowio::testing;

namespace {

constexpr int kRounds = 20;

}  // namespace

// The grants are logged in shared memory in the order they happen, and
// each process notes how many grants there were when it asked. Between
// asking and getting the lock, a process sees any other process granted
// at most three times: once for a request that was waiting before, once
// for a request that reached the lock's queue (the waitlist, the MCS queue,
// the range table) while this one was on its way there, and once more
// where that race repeats for the range table's own mutex. The waitlist
// locks pass the lock on in rank order, the queue and range locks in order
// of arrival; a lock that let a process starve, or favoured one, exceeds
// the bound (the check counts, it does not time).
TEST_CASE("Sync.Fairness.BoundedHandOffs") {
  const int ranks = world_size();
  LockRuntime runtime;
  // Counter 0: grants so far; then the log of granted ranks.
  SharedCounters log(1 + ranks * kRounds);
  for (sync::LockSettings settings : flowio_locks()) {
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("fairness"), runtime.port);
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<std::int64_t> asked_at;
    for (int round = 0; round < kRounds; ++round) {
      asked_at.push_back(log.load(0));
      sync::Lease lease = lock->acquire({0, 1}, sync::LockMode::exclusive).get();
      const std::int64_t position = log.add(0, 1) - 1;
      log.add(1 + static_cast<int>(position), world_rank());
      // Long enough for the others' requests to reach the lock's queue
      // before this release, even with 4 ranks on 2 cores.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    lock->close();
    MPI_Barrier(MPI_COMM_WORLD);
    const std::int64_t grants = log.load(0);
    CHECK(grants == static_cast<std::int64_t>(ranks) * kRounds);
    std::vector<int> granted_at;
    for (std::int64_t g = 0; g < grants; ++g) {
      if (log.load(1 + static_cast<int>(g)) == world_rank())
        granted_at.push_back(static_cast<int>(g));
    }
    REQUIRE(granted_at.size() == asked_at.size());
    int worst = 0;
    for (std::size_t request = 0; request < asked_at.size(); ++request) {
      std::vector<int> others(static_cast<std::size_t>(ranks), 0);
      for (auto g = asked_at[request]; g < granted_at[request]; ++g) {
        const auto holder = static_cast<std::size_t>(log.load(1 + static_cast<int>(g)));
        worst = std::max(worst, ++others[holder]);
      }
    }
    CHECK(worst <= 3);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      for (std::int64_t g = 0; g <= grants; ++g) {
        log.add(static_cast<int>(g), -log.load(static_cast<int>(g)));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}
