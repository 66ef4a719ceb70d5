#include "io/uring_queue.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <thread>

#include "flowio/error.h"
#include "io/uring_backend.h"

namespace flowio::io {
namespace {

constexpr int kMostBusyRetries = 12;  // about 4 ms of sleeping in all

// Entries of the ring: as many as one transfer keeps in flight. The CQ has
// twice as many (liburing's default), so completions never overflow it.
constexpr unsigned kDepth = UringBackend::ring_depth;

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

UringQueue::UringQueue(int event_fd, io_uring ring) : event_fd_(event_fd), ring_(ring) {}

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
  std::unique_lock lock(mutex_);
  if (!usable_) throw_errno(EBADF, "io_uring queue: ring lost after an earlier failure");
  RingTransfer transfer(ring_, kDepth, fd, direction, requests, bytes_read);
  current_ = &transfer;
  int busy_retries = 0;
  for (;;) {
    try {
      transfer.start_requests();
    } catch (const std::exception& error) {
      transfer.fail(EBUSY, error.what());
    }
    if (transfer.in_flight() == 0) break;
    bool refused = false;
    if (io_uring_sq_ready(&ring_) > 0) {
      const int result = io_uring_submit(&ring_);
      refused = result == -EAGAIN || result == -EBUSY;
      // -EINTR: whatever is queued stays queued; the next round submits it.
      // -EAGAIN, -EBUSY: the kernel lacks resources right now; completions
      // of what it owns free them, else back off below.
      if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY) {
        transfer.fail(-result, "io_uring_submit");
        if (transfer.kernel_owned() == 0) {
          remake_ring();
          break;
        }
      }
    }
    if (transfer.kernel_owned() == 0 && io_uring_sq_ready(&ring_) > 0) {
      if (busy_retries >= kMostBusyRetries) {
        transfer.fail(EAGAIN, "io_uring_submit: the kernel keeps refusing");
        remake_ring();
        break;
      }
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(std::int64_t{1} << busy_retries));
      lock.lock();
      ++busy_retries;
      continue;
    }
    // reap() wakes this thread when there is something to submit or the
    // transfer is done; after a refused submission, when a completion has
    // freed something.
    const std::uint64_t reaped = reaped_;
    wake_.wait(lock, [&] {
      return transfer.in_flight() == 0 ||
             (io_uring_sq_ready(&ring_) > 0 && (!refused || reaped_ != reaped));
    });
    if (transfer.progressed()) busy_retries = 0;
  }
  current_ = nullptr;
  transfer.throw_if_failed();
}

void UringQueue::reap() {
  drain(event_fd_);
  std::lock_guard lock(mutex_);
  if (!usable_) return;
  if (current_ == nullptr) {
    // Every transfer waits for all its completions before it ends: there
    // are none without one.
    io_uring_cq_advance(&ring_, io_uring_cq_ready(&ring_));
    return;
  }
  try {
    if (current_->harvest() > 0) ++reaped_;
  } catch (const std::exception& error) {
    current_->fail(EBUSY, error.what());
  }
  if (current_->in_flight() == 0 || io_uring_sq_ready(&ring_) > 0) wake_.notify_one();
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
