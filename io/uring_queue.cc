#include "io/uring_queue.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <thread>

#include "flowio/error.h"
#include "io/uring_backend.h"

namespace flowio::io {
namespace {

constexpr int kMostBusyRetries = 12;  // about 4 ms of sleeping in all

// Entries of the ring: as many as one transfer keeps in flight. The CQ has
// twice as many (liburing's default), so completions never overflow it.
constexpr unsigned kDepth = UringBackend::ring_depth;

// While requests still wait for a slot, the transferring thread is woken
// once this many slots are free again, so that it refills them in batches.
constexpr std::size_t kRefillBatch = kDepth / 4;

constexpr std::size_t kNobodyWaits = std::numeric_limits<std::size_t>::max();

void drain(int fd) {
  std::uint64_t count = 0;
  // Nonblocking: nothing to read is not an error, only nothing to do.
  [[maybe_unused]] const ssize_t got = ::read(fd, &count, sizeof count);
}

}  // namespace

std::unique_ptr<UringQueue> UringQueue::create() {
  if (!UringBackend::available()) return nullptr;
  const int event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd < 0) return nullptr;
  io_uring ring{};
  if (io_uring_queue_init(kDepth, &ring, 0) < 0) {
    ::close(event_fd);
    return nullptr;
  }
  if (io_uring_register_eventfd(&ring, event_fd) < 0) {
    io_uring_queue_exit(&ring);
    ::close(event_fd);
    return nullptr;
  }
  return std::unique_ptr<UringQueue>(new UringQueue(event_fd, ring));
}

UringQueue::UringQueue(int event_fd, io_uring ring) : event_fd_(event_fd), ring_(ring) {
  // At most kDepth operations are in flight: taking never allocates.
  arrived_.reserve(kDepth);
}

UringQueue::~UringQueue() {
  if (usable_) io_uring_queue_exit(&ring_);
  ::close(event_fd_);
}

bool UringQueue::usable() const {
  std::lock_guard lock(mutex_);
  return usable_;
}

void UringQueue::write(int fd, std::span<const IoRequest> requests) {
  check_requests(requests);
  transfer(fd, Direction::write, requests, {});
}

void UringQueue::read(int fd, std::span<const IoRequest> requests,
                      std::span<std::size_t> bytes_read) {
  check_read_requests(requests, bytes_read);
  transfer(fd, Direction::read, requests, bytes_read);
}

void UringQueue::transfer(int fd, Direction direction, std::span<const IoRequest> requests,
                          std::span<std::size_t> bytes_read) {
  std::lock_guard turn(turn_);
  // Only this thread touches the SQ and the transfer; reap() only the CQ
  // and arrived_ (under mutex_), so a submission that copies data inline
  // never holds up the progress engine.
  RingTransfer transfer(ring_, kDepth, fd, direction, requests, bytes_read);
  std::vector<RingTransfer::Completion> acting;
  acting.reserve(kDepth);
  {
    std::lock_guard lock(mutex_);
    if (!usable_) throw_errno(EBADF, "io_uring queue: ring lost after an earlier failure");
    active_ = true;
    arrived_.clear();
  }
  int busy_retries = 0;
  bool lost = false;
  for (;;) {
    try {
      transfer.start_requests();
    } catch (const std::exception& error) {
      transfer.fail(EBUSY, error.what());
    }
    if (transfer.in_flight() == 0) break;
    if (io_uring_sq_ready(&ring_) > 0) {
      const int result = io_uring_submit(&ring_);
      // -EINTR: whatever is queued stays queued; the next round submits it.
      // -EAGAIN, -EBUSY: the kernel lacks resources right now; completions
      // of what it owns free them, else back off below.
      if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY) {
        transfer.fail(-result, "io_uring_submit");
      }
    }
    const unsigned owned = transfer.kernel_owned();
    if (owned == 0) {
      // Queued entries the kernel does not take, and nothing of ours to
      // wait for.
      if (transfer.failed() || busy_retries >= kMostBusyRetries) {
        transfer.fail(EAGAIN, "io_uring_submit: the kernel keeps refusing");
        lost = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(std::int64_t{1} << busy_retries));
      ++busy_retries;
      continue;
    }
    // Woken by reap() when every operation the kernel owns has completed,
    // or, while requests wait for a slot, when a batch of slots is free.
    const bool waiting_requests = !transfer.failed() && !transfer.all_started();
    {
      std::unique_lock lock(mutex_);
      wake_at_ = waiting_requests ? std::min<std::size_t>(owned, kRefillBatch) : owned;
      wake_.wait(lock, [&] { return arrived_.size() >= wake_at_; });
      wake_at_ = kNobodyWaits;
      acting.swap(arrived_);
    }
    try {
      transfer.act(acting);
    } catch (const std::exception& error) {
      transfer.fail(EBUSY, error.what());
    }
    acting.clear();
    if (transfer.progressed()) busy_retries = 0;
  }
  {
    std::lock_guard lock(mutex_);
    active_ = false;
    // Entries still in the SQ point into this transfer's memory: the next
    // submission would hand them to the kernel. Drop the ring with them.
    if (lost) remake_ring();
  }
  transfer.throw_if_failed();
}

void UringQueue::reap() {
  drain(event_fd_);
  std::lock_guard lock(mutex_);
  if (!usable_) return;
  if (!active_) {
    // Every transfer waits for all its completions before it ends: there
    // are none without one.
    io_uring_cq_advance(&ring_, io_uring_cq_ready(&ring_));
    return;
  }
  RingTransfer::take(ring_, arrived_);
  if (arrived_.size() >= wake_at_) wake_.notify_one();
}

void UringQueue::remake_ring() {
  io_uring_queue_exit(&ring_);
  ring_ = io_uring{};
  usable_ = io_uring_queue_init(kDepth, &ring_, 0) >= 0;
  if (usable_ && io_uring_register_eventfd(&ring_, event_fd_) < 0) {
    io_uring_queue_exit(&ring_);
    usable_ = false;
  }
}

}  // namespace flowio::io
