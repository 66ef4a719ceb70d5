// Mutual exclusion under contention, for every lock atomic mode can use: a
// counter stored in a file is read, incremented and written back under the
// lock by every rank, 200 times each (FLOWIO_LOCK_ITERATIONS), and must end
// at the exact total.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "sync/lock_settings.h"
#include "tests/sync/lock_test_support.h"

using namespace flowio;
using namespace flowio::testing;

namespace {

int iterations() {
  const char* text = std::getenv("FLOWIO_LOCK_ITERATIONS");
  return text == nullptr ? 200 : std::atoi(text);
}

std::int64_t read_counter(int fd) {
  std::int64_t value = -1;
  REQUIRE(::pread(fd, &value, sizeof value, 0) == static_cast<ssize_t>(sizeof value));
  return value;
}

void write_counter(int fd, std::int64_t value) {
  REQUIRE(::pwrite(fd, &value, sizeof value, 0) == static_cast<ssize_t>(sizeof value));
}

}  // namespace

// Every rank increments the shared counter; a lost update (two ranks inside
// at once) leaves it short of ranks * iterations. The shared-memory count
// of ranks inside the region must never exceed one.
TEST_CASE("Sync.MutualExclusion.FileCounter") {
  const int rounds = iterations();
  LockRuntime runtime;
  SharedCounters inside(2);  // 0: ranks inside now, 1: the most ever seen
  for (sync::LockSettings settings : locks_under_test()) {
    CAPTURE(describe(settings));
    const std::string path = scratch_path("counter_" + describe(settings));
    if (world_rank() == 0) {
      const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0644);
      REQUIRE(fd >= 0);
      write_counter(fd, 0);
      ::close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const int fd = ::open(path.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    std::unique_ptr<sync::Lock> lock =
        sync::make_lock(settings, MPI_COMM_WORLD, path, runtime.port);
    for (int round = 0; round < rounds; ++round) {
      sync::Lease lease = lock->acquire({0, 8}, sync::LockMode::exclusive).get();
      const std::int64_t now_inside = inside.add(0, 1);
      if (now_inside > inside.load(1)) inside.add(1, now_inside - inside.load(1));
      write_counter(fd, read_counter(fd) + 1);
      inside.add(0, -1);
      lease.release();
    }
    lock->close();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(read_counter(fd) == static_cast<std::int64_t>(rounds) * world_size());
    CHECK(inside.load(1) == 1);
    ::close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      ::unlink(path.c_str());
      inside.add(1, -inside.load(1));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}
