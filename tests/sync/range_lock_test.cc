// Byte-range locks: disjoint ranges and shared overlapping ranges are held
// by every rank at once; overlapping exclusive ranges never are; a writer
// is not overtaken by readers that came after it.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "sync/lock_settings.h"
#include "tests/sync/lock_test_support.h"

using namespace flowio;
using namespace flowio::testing;

namespace {

// Range locks of every flowio algorithm, and fcntl's.
std::vector<sync::LockSettings> range_locks() {
  std::vector<sync::LockSettings> locks;
  for (const sync::LockSettings& settings : every_lock()) {
    if (settings.ranges) locks.push_back(settings);
  }
  return locks;
}

// Collective: true on every rank if every rank reached it while holding its
// lease, within `seconds`. A lock that serialized the holders would keep
// the others from arriving: the wait times out instead of hanging.
bool all_arrive_while_holding(double seconds) {
  MPI_Request barrier = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int done = 0;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done != 0;
}

// Completes a barrier left behind by all_arrive_while_holding, once the
// leases are released.
void finish_barrier(bool arrived) {
  if (!arrived) MPI_Barrier(MPI_COMM_WORLD);
}

// With every range lock: each rank takes `range` in `mode`, and every rank
// must reach a barrier while holding its lease.
void check_held_together(sync::ByteRange range, sync::LockMode mode) {
  LockRuntime runtime;
  for (sync::LockSettings settings : range_locks()) {
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("ranges"), runtime.port);
    sync::Lease lease = lock->acquire(range, mode).get();
    const bool arrived = all_arrive_while_holding(20);
    CHECK(arrived);
    lease.release();
    finish_barrier(arrived);
    lock->close();
  }
}

}  // namespace

// Each rank locks its own 100 bytes exclusively; all of them hold their
// leases at the same moment (proved by a barrier reached while holding).
TEST_CASE("Sync.RangeLock.DisjointRangesTogether") {
  const std::int64_t begin = world_rank() * 100;
  check_held_together({begin, begin + 100}, sync::LockMode::exclusive);
}

// Shared leases of one range are held together too.
TEST_CASE("Sync.RangeLock.ReadersTogether") {
  check_held_together({0, 1000}, sync::LockMode::shared);
}

// Overlapping ranges, writers and readers mixed: while a writer is inside
// no one else is, and readers meet only readers (counted in shared memory
// around a short stay inside).
TEST_CASE("Sync.RangeLock.OverlapsExclude") {
  LockRuntime runtime;
  SharedCounters inside(3);  // 0: writers inside, 1: readers inside, 2: violations
  for (sync::LockSettings settings : range_locks()) {
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("ranges"), runtime.port);
    const bool writer = world_rank() % 2 == 0;
    for (int round = 0; round < 10; ++round) {
      // Ranges [0, 50 + 10 * rank + round): they all overlap.
      const sync::ByteRange range{0, 50 + 10 * world_rank() + round};
      sync::Lease lease =
          lock->acquire(range, writer ? sync::LockMode::exclusive : sync::LockMode::shared).get();
      if (writer) {
        if (inside.add(0, 1) != 1 || inside.load(1) != 0) inside.add(2, 1);
      } else {
        inside.add(1, 1);
        if (inside.load(0) != 0) inside.add(2, 1);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      inside.add(writer ? 0 : 1, -1);
      lease.release();
    }
    lock->close();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(inside.load(2) == 0);
  }
}

// A writer that waits behind a reader keeps its turn: a reader that asks
// after it waits for it. Rank 0 reads, the last rank asks to write, then
// rank 0 asks to read again and lets its first lease go: the writer must
// come first (on 1 rank, all three requests are rank 0's).
TEST_CASE("Sync.RangeLock.WriterNotOvertakenByLaterReaders") {
  const int writer = world_size() - 1;
  LockRuntime runtime;
  SharedCounters order(3);  // 0: grants so far; 1: the writer's turn; 2: the late reader's
  for (sync::LockSettings settings : range_locks()) {
    if (settings.algorithm == sync::LockAlgorithm::fcntl) continue;  // fcntl promises no order
    CAPTURE(describe(settings));
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, lock_file("ranges"), runtime.port);
    sync::Lease first;
    if (world_rank() == 0) first = lock->acquire({0, 100}, sync::LockMode::shared).get();
    MPI_Barrier(MPI_COMM_WORLD);
    Future<sync::Lease> writing;
    if (world_rank() == writer) writing = lock->acquire({0, 100}, sync::LockMode::exclusive);
    // The write request is in the table before the late reader asks.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Barrier(MPI_COMM_WORLD);
    Future<sync::Lease> late_reading;
    if (world_rank() == 0) {
      late_reading = lock->acquire({50, 60}, sync::LockMode::shared);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      first.release();
    }
    if (writing.valid()) {
      sync::Lease held = writing.get();
      order.add(1, order.add(0, 1));
    }
    if (late_reading.valid()) {
      sync::Lease held = late_reading.get();
      order.add(2, order.add(0, 1));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(order.load(1) == 1);
    CHECK(order.load(2) == 2);
    lock->close();
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      for (int i = 0; i < 3; ++i) order.add(i, -order.load(i));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}
