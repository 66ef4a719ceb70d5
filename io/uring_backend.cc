#include "io/uring_backend.h"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "flowio/error.h"
#include "io/ring_transfer.h"

namespace flowio::io {
namespace {

// The calling thread's ring. It lives in a thread_local, so it is created
// lazily on the thread's first call and destroyed when the thread exits;
// only its own thread ever touches it, so it needs no locking.
class ThreadRing {
 public:
  ThreadRing() noexcept = default;
  ~ThreadRing() { discard(); }
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;

  // The ring, created first if this thread has none; nullptr when the kernel
  // refuses to create one (the thread's next call tries again).
  io_uring* get() noexcept {
    if (!created_) {
      if (io_uring_queue_init(UringBackend::ring_depth, &ring_, 0) < 0) return nullptr;
      created_ = true;
    }
    return &ring_;
  }

  // Destroys the ring; the next get() creates a new one. Precondition: no
  // operation submitted on it is still owned by the kernel.
  void discard() noexcept {
    if (created_) {
      io_uring_queue_exit(&ring_);
      created_ = false;
    }
  }

 private:
  io_uring ring_{};
  bool created_ = false;
};

thread_local ThreadRing this_thread_ring;
thread_local UringQueue* this_thread_queue = nullptr;

bool probe_kernel() noexcept {
  io_uring ring{};
  if (io_uring_queue_init(4, &ring, 0) < 0) return false;
  bool supported = false;
  if (io_uring_probe* probe = io_uring_get_probe_ring(&ring)) {
    supported = io_uring_opcode_supported(probe, IORING_OP_READ) &&
                io_uring_opcode_supported(probe, IORING_OP_WRITE) &&
                io_uring_opcode_supported(probe, IORING_OP_READV) &&
                io_uring_opcode_supported(probe, IORING_OP_WRITEV);
    io_uring_free_probe(probe);
  }
  io_uring_queue_exit(&ring);
  return supported;
}

constexpr int kMostBusyRetries = 12;  // about 4 ms of sleeping in all

// Called while an exception leaves a transfer: waits until the kernel owns
// no operation of it, because the memory they use may go away once the
// exception reaches the caller.
void abandon(ThreadRing& thread_ring, io_uring& ring, RingTransfer& transfer) noexcept {
  for (unsigned owned = transfer.kernel_owned(); owned > 0; --owned) {
    io_uring_cqe* cqe = nullptr;
    int result;
    while ((result = io_uring_wait_cqe(&ring, &cqe)) == -EINTR) {
    }
    if (result < 0) {
      // The kernel may still write into memory the caller is about to
      // free; returning would corrupt it silently.
      std::fprintf(stderr, "flowio: io_uring_wait_cqe failed (errno %d) with I/O in flight\n",
                   -result);
      std::terminate();
    }
    io_uring_cqe_seen(&ring, cqe);
  }
  // Entries still queued in the SQ would be submitted by this thread's
  // next call and point into this call's memory: drop the ring with them.
  if (io_uring_sq_ready(&ring) > 0) thread_ring.discard();
}

// Moves `transfer` on the calling thread's ring: submits what is queued
// and sleeps in the kernel until a completion is there, until every
// request is done. Returns only once the kernel owns no operation of the
// transfer, also when it throws.
void run_on_own_ring(ThreadRing& thread_ring, io_uring& ring, RingTransfer& transfer) {
  int busy_retries = 0;
  try {
    for (;;) {
      transfer.start_requests();
      if (transfer.in_flight() == 0) break;
      const int result = io_uring_submit_and_wait(&ring, 1);
      // -EINTR: a signal cut the wait short; whatever is queued stays queued
      // and the next call submits it.
      if (result < 0 && result != -EINTR) {
        if (result != -EAGAIN && result != -EBUSY) {
          throw_errno(-result, "io_uring_submit_and_wait");
        }
        // The kernel lacks resources for more right now. Completions of what
        // it already owns free them: sleep until one arrives.
        if (transfer.kernel_owned() > 0) {
          io_uring_cqe* cqe = nullptr;
          const int waited = io_uring_wait_cqe(&ring, &cqe);
          if (waited < 0 && waited != -EINTR) throw_errno(-waited, "io_uring_wait_cqe");
        } else {
          // Nothing of ours to wait for: back off briefly (sleeping, not
          // spinning) a bounded number of times before giving up.
          if (busy_retries >= kMostBusyRetries) throw_errno(-result, "io_uring_submit_and_wait");
          std::this_thread::sleep_for(std::chrono::microseconds(std::int64_t{1} << busy_retries));
          ++busy_retries;
        }
      }
      transfer.harvest();
      if (transfer.progressed()) busy_retries = 0;
    }
  } catch (...) {
    abandon(thread_ring, ring, transfer);
    throw;
  }
  transfer.throw_if_failed();
}

}  // namespace

bool UringBackend::available() {
  static const bool result = probe_kernel();
  return result;
}

void UringBackend::route_this_thread(UringQueue* queue) noexcept { this_thread_queue = queue; }

void UringBackend::write(int fd, std::span<const IoRequest> requests) {
  check_requests(requests);
  if (requests.empty()) return;
  // A lone request gains nothing from the ring: the call waits for it
  // anyway, and a buffered write submitted to io_uring is often handed to a
  // kernel worker thread, two context switches a plain pwritev avoids.
  if (requests.size() == 1) return fallback_.write(fd, requests);
  if (this_thread_queue != nullptr && this_thread_queue->usable()) {
    return this_thread_queue->write(fd, requests);
  }
  io_uring* ring = this_thread_ring.get();
  if (ring == nullptr) return fallback_.write(fd, requests);
  RingTransfer transfer(*ring, ring_depth, fd, Direction::write, requests, {});
  run_on_own_ring(this_thread_ring, *ring, transfer);
}

void UringBackend::read(int fd, std::span<const IoRequest> requests,
                        std::span<std::size_t> bytes_read) {
  check_read_requests(requests, bytes_read);
  if (requests.empty()) return;
  if (requests.size() == 1) return fallback_.read(fd, requests, bytes_read);
  if (this_thread_queue != nullptr && this_thread_queue->usable()) {
    return this_thread_queue->read(fd, requests, bytes_read);
  }
  io_uring* ring = this_thread_ring.get();
  if (ring == nullptr) return fallback_.read(fd, requests, bytes_read);
  RingTransfer transfer(*ring, ring_depth, fd, Direction::read, requests, bytes_read);
  run_on_own_ring(this_thread_ring, *ring, transfer);
}

}  // namespace flowio::io
