// The progress engine alone: completes MPI requests and reports them, calls
// back when a watched descriptor becomes readable, stops calling after
// forget_descriptor, and uses (almost) no CPU while idle or while waiting
// for a request that takes long.
#include "runtime/engine/progress.h"

#include <doctest/doctest.h>
#include <mpi.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

using flowio::runtime::Progress;

namespace {

template <typename Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

// A self-message's two requests complete, reported once with success.
TEST_CASE("Runtime.Progress.CompletesRequests") {
  Progress progress;
  int sent = 42, received = 0;
  std::vector<MPI_Request> requests(2);
  MPI_Irecv(&received, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &requests[0]);
  MPI_Isend(&sent, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &requests[1]);
  std::atomic<int> calls{0}, code{-1};
  progress.watch(std::move(requests), [&](int result, std::span<const MPI_Status>) {
    code = result;
    ++calls;
  });
  CHECK(eventually([&] { return calls.load() == 1; }));
  CHECK(code.load() == MPI_SUCCESS);
  CHECK(received == 42);
}

// A receive that only completes after 200 ms: while the engine waits for
// it, its back-off keeps the thread's CPU time well below 10% of a core.
TEST_CASE("Runtime.Progress.WaitingCostsLittleCpu") {
  Progress progress;
  int value = 0, sent = 7;
  MPI_Request receive;
  MPI_Irecv(&value, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &receive);
  std::atomic<bool> done{false};
  const std::int64_t cpu_before = progress.cpu_ns();
  progress.watch({receive}, [&](int, std::span<const MPI_Status>) { done = true; });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::int64_t waiting_cpu = progress.cpu_ns() - cpu_before;
  MPI_Send(&sent, 1, MPI_INT, 0, 9, MPI_COMM_SELF);
  CHECK(eventually([&] { return done.load(); }));
  CHECK(value == 7);
  MESSAGE("progress thread CPU while waiting 200 ms: " << waiting_cpu / 1000 << " us");
  CHECK(waiting_cpu < 20'000'000);
}

// Idle, the engine blocks: a second of nothing costs under 1% of a core.
TEST_CASE("Runtime.Progress.IdleCostsNothing") {
  Progress progress;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::int64_t before = progress.cpu_ns();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::int64_t idle_cpu = progress.cpu_ns() - before;
  MESSAGE("progress thread CPU over 1 s idle: " << idle_cpu / 1000 << " us");
  CHECK(idle_cpu < 10'000'000);
}

// A watched eventfd calls back when written, and never after
// forget_descriptor() returns.
TEST_CASE("Runtime.Progress.WatchesDescriptors") {
  Progress progress;
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  REQUIRE(fd >= 0);
  std::atomic<int> calls{0};
  progress.watch_descriptor(fd, [&] {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t got = read(fd, &count, sizeof count);
    ++calls;
  });
  const std::uint64_t one = 1;
  REQUIRE(write(fd, &one, sizeof one) == sizeof one);
  CHECK(eventually([&] { return calls.load() == 1; }));
  progress.forget_descriptor(fd);
  REQUIRE(write(fd, &one, sizeof one) == sizeof one);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(calls.load() == 1);
  close(fd);
}
