// UringQueue: an io_uring ring whose completions another thread reaps. The
// ring has an eventfd registered (io_uring_register_eventfd), which turns
// readable when completions arrive; the process's progress engine watches
// it (runtime/engine/progress.h) and calls reap(), so that one thread wakes for
// MPI requests and file I/O completions alike, and no thread waits in
// io_uring_wait_cqe for this ring.
//
// The thread that transfers (runtime/engine/io_service.h's I/O thread, routed
// here by UringBackend::route_this_thread) queues its requests and submits
// them itself (io_uring_enter copies page-cache data inline when it can,
// which belongs on the I/O thread, not on the progress engine), then
// sleeps on a condition variable. reap() only copies completions out of
// the CQ (the SQ stays the transferring thread's alone, so the progress
// engine never waits behind a submission) and wakes the transferring
// thread when all it submitted has completed, or, while requests wait for
// a slot, when a batch of slots is free: for a transfer of up to
// ring_depth requests, once.
#pragma once

#include <liburing.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "io/ring_transfer.h"
#include "io/storage_backend.h"

namespace flowio::io {

// Thread safety: read() and write() may be called from any thread (one
// transfer at a time: callers take turns); reap() from one other thread.
class UringQueue {
 public:
  // nullptr when the kernel refuses the ring, the eventfd or its
  // registration.
  static std::unique_ptr<UringQueue> create();
  // Precondition: no transfer under way.
  ~UringQueue();
  UringQueue(const UringQueue&) = delete;
  UringQueue& operator=(const UringQueue&) = delete;

  // The eventfd the ring signals: readable when completions are there.
  int completion_fd() const noexcept { return event_fd_; }

  // StorageBackend's contract (storage_backend.h): every request moved,
  // IoError for the first failure, and no operation left in the kernel
  // when they return or throw. Callers keep requests.size() > 1 (a lone
  // request gains nothing from a ring).
  void write(int fd, std::span<const IoRequest> requests);
  void read(int fd, std::span<const IoRequest> requests, std::span<std::size_t> bytes_read);

  // Collects the completions there are and wakes the transferring thread
  // when it has something to do. Call it when completion_fd() is readable.
  void reap();

  // False once the ring had to be dropped and could not be made again
  // (callers then use rings of their own).
  bool usable() const;

 private:
  UringQueue(int event_fd, io_uring ring);
  void transfer(int fd, Direction direction, std::span<const IoRequest> requests,
                std::span<std::size_t> bytes_read);
  // Drops the entries queued in the SQ (they point into memory of a
  // transfer that ends) by making the ring again. Requires mutex_.
  void remake_ring();

  const int event_fd_;
  std::mutex turn_;  // one transfer at a time
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  io_uring ring_;
  bool usable_ = true;
  bool active_ = false;  // a transfer is under way
  // Completions reap() took for the transfer, not yet acted on.
  std::vector<RingTransfer::Completion> arrived_;
  // How many of them wake the transferring thread (none while it is not
  // waiting).
  std::size_t wake_at_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace flowio::io
