// UringQueue alone: a transfer's completions come only through reap()
// (nothing else waits on the ring), transfers of more requests than the
// ring holds move every byte, a failed transfer reports its errno and
// leaves the queue usable, and UringBackend calls on a routed thread go
// through the queue.
#include "io/uring_queue.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "flowio/error.h"
#include "io/uring_backend.h"
#include "tests/io/io_test_support.h"

using namespace flowio::io;
using flowio::io::testing::ScratchFile;

namespace {

// The progress engine's part, on a thread of its own: reap() whenever the
// queue's eventfd turns readable, until stopped.
class Reaper {
 public:
  explicit Reaper(UringQueue& queue)
      : thread_([this, &queue] {
          while (!stop_) {
            pollfd watched{queue.completion_fd(), POLLIN, 0};
            if (::poll(&watched, 1, 10) > 0) {
              ++reaps_;  // before: reap() may wake the transferring thread
              queue.reap();
            }
          }
        }) {}
  ~Reaper() {
    stop_ = true;
    thread_.join();
  }
  int reaps() const { return reaps_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> reaps_{0};
  std::thread thread_;
};

// `count` requests of `bytes` each, every other block of the file.
struct SpacedRequests {
  SpacedRequests(std::size_t count, std::size_t bytes) : memory(count * bytes) {
    for (std::size_t i = 0; i < count; ++i) {
      iovecs.push_back(iovec{memory.data() + i * bytes, bytes});
    }
    for (std::size_t i = 0; i < count; ++i) {
      requests.push_back(IoRequest{static_cast<std::int64_t>(2 * i * bytes),
                                   std::span<const iovec>(&iovecs[i], 1), bytes});
    }
  }
  std::vector<unsigned char> memory;
  std::vector<iovec> iovecs;
  std::vector<IoRequest> requests;
};

}  // namespace

TEST_CASE("Io.UringQueue.CompletesOnlyThroughReap") {
  std::unique_ptr<UringQueue> queue = UringQueue::create();
  if (!queue) {
    MESSAGE("io_uring unavailable here: nothing to test");
    return;
  }
  ScratchFile file("uring_queue_reap");
  SpacedRequests out(8, 4096);
  for (std::size_t i = 0; i < out.memory.size(); ++i) {
    out.memory[i] = static_cast<unsigned char>(i * 13 + 5);
  }
  std::atomic<bool> written{false};
  std::thread writer([&] {
    queue->write(file.fd(), out.requests);
    written = true;
  });
  // The kernel finishes eight page-cache writes within microseconds; the
  // call still waits, for nobody has reaped them.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(written.load());
  pollfd watched{queue->completion_fd(), POLLIN, 0};
  CHECK(::poll(&watched, 1, 0) == 1);
  {
    Reaper reaper(*queue);
    writer.join();
    CHECK(reaper.reaps() >= 1);
  }
  CHECK(written.load());
  SpacedRequests in(8, 4096);
  std::vector<std::size_t> got(8);
  Reaper reaper(*queue);
  queue->read(file.fd(), in.requests, got);
  CHECK(in.memory == out.memory);
  for (std::size_t n : got) CHECK(n == 4096);
}

// More requests than the ring has entries: slots are reused as completions
// are reaped, and a read past end of file reports how much there was.
TEST_CASE("Io.UringQueue.MoreRequestsThanTheRing") {
  std::unique_ptr<UringQueue> queue = UringQueue::create();
  if (!queue) return;
  Reaper reaper(*queue);
  ScratchFile file("uring_queue_many");
  const std::size_t count = 3 * UringBackend::ring_depth + 7;
  SpacedRequests out(count, 512);
  for (std::size_t i = 0; i < out.memory.size(); ++i) {
    out.memory[i] = static_cast<unsigned char>(i * 7 + i / 253 + 1);
  }
  queue->write(file.fd(), out.requests);
  SpacedRequests in(count + 1, 512);  // the last one lies past end of file
  std::vector<std::size_t> got(count + 1, 99);
  queue->read(file.fd(), in.requests, got);
  CHECK(std::equal(out.memory.begin(), out.memory.end(), in.memory.begin()));
  CHECK(got[0] == 512);
  CHECK(got[count - 1] == 512);
  CHECK(got[count] == 0);
}

// A write to a descriptor opened read-only fails with EBADF; the next
// transfer works.
TEST_CASE("Io.UringQueue.FailureLeavesItUsable") {
  std::unique_ptr<UringQueue> queue = UringQueue::create();
  if (!queue) return;
  Reaper reaper(*queue);
  ScratchFile file("uring_queue_failure");
  SpacedRequests out(4, 1024);
  const int read_only = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(read_only >= 0);
  int system_errno = 0;
  try {
    queue->write(read_only, out.requests);
  } catch (const flowio::IoError& error) {
    system_errno = error.system_errno();
  }
  ::close(read_only);
  CHECK(system_errno == EBADF);
  CHECK(queue->usable());
  queue->write(file.fd(), out.requests);
}

// A routed thread's backend calls with several requests go through the
// queue (and so wait for its reaper); unrouted threads use their own ring.
TEST_CASE("Io.UringQueue.RoutedBackendCallsGoThroughIt") {
  std::unique_ptr<UringQueue> queue = UringQueue::create();
  if (!queue) return;
  ScratchFile file("uring_queue_routed");
  SpacedRequests out(4, 1024);
  UringBackend backend;
  backend.write(file.fd(), out.requests);  // own ring: no reaper needed
  std::atomic<bool> written{false};
  std::thread routed([&] {
    UringBackend::route_this_thread(queue.get());
    backend.write(file.fd(), out.requests);
    written = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(written.load());
  {
    Reaper reaper(*queue);
    routed.join();
  }
  CHECK(written.load());
}
