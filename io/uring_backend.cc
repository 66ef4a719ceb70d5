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
#include "io/iovec_cursor.h"

namespace flowio::io {
namespace {

enum class Direction { read, write };

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

// One backend call on the calling thread's ring. Lives on the caller's stack
// for the duration of the call.
//
// Lifetime: the kernel reads an operation's iovec array (and reads or
// writes the memory it points to) until the operation's completion has been
// reaped. The iovecs are either the caller's, borrowed until the call
// returns, or a slot's `scratch`, which is rebuilt only after the slot's
// completion has been reaped. run() does not return or throw while any
// operation is still owned by the kernel.
//
// Memory ordering: the ring is set up without SQPOLL, so the kernel reads
// submission entries only inside this thread's own io_uring_enter calls;
// program order makes them and the iovecs they point to visible, no fence
// is needed (a worker the kernel hands an operation to is ordered by that
// hand-off). Completions may be posted from other CPUs (io-wq workers):
// io_uring_peek_batch_cqe reads the CQ tail with an acquire load that pairs
// with the kernel's release when it posts, so once a completion is seen,
// the data the kernel read into our buffers is visible too.
// io_uring_cq_advance hands entries back with a release store, after they
// have been copied out.
class RingTransfer {
 public:
  RingTransfer(ThreadRing& thread_ring, io_uring& ring, int fd, Direction direction,
               std::span<const IoRequest> requests, std::span<std::size_t> bytes_read)
      : thread_ring_(thread_ring),
        ring_(ring),
        fd_(fd),
        direction_(direction),
        requests_(requests),
        bytes_read_(bytes_read),
        slots_(std::min<std::size_t>(requests.size(), UringBackend::ring_depth)) {
    free_slots_.reserve(slots_.size());
    for (std::size_t i = slots_.size(); i > 0; --i) free_slots_.push_back(i - 1);
  }

  // Moves every request; throws IoError for the first failure seen.
  void run() {
    try {
      for (;;) {
        if (!failed()) start_requests();
        if (in_flight_ == 0) break;
        submit_and_wait();
        harvest();
      }
    } catch (...) {
      abandon();
      throw;
    }
    if (failed()) throw_errno(failure_.system_errno, failure_.what);
  }

 private:
  // One request in progress. The slot index is the operation's user_data.
  struct Slot {
    std::size_t request = 0;
    std::size_t done = 0;
    IovecCursor cursor;
    std::vector<iovec> scratch;
    bool vectored = false;
  };

  struct Failure {
    int system_errno = 0;
    std::string what;
  };

  struct Completion {
    std::uint64_t slot;
    int result;
  };

  bool failed() const noexcept { return failure_.system_errno != 0; }

  // Operations submitted to the kernel (consumed from the SQ) whose
  // completion has not been reaped yet. Entries still in the SQ are not
  // counted: without SQPOLL the kernel reads them only inside our own
  // io_uring_enter calls.
  unsigned kernel_owned() const noexcept { return in_flight_ - io_uring_sq_ready(&ring_); }

  void start_requests() {
    while (next_request_ < requests_.size() && !free_slots_.empty()) {
      const std::size_t index = next_request_++;
      const IoRequest& request = requests_[index];
      if (request.bytes == 0) {
        if (direction_ == Direction::read) bytes_read_[index] = 0;
        continue;
      }
      const std::size_t slot_index = free_slots_.back();
      free_slots_.pop_back();
      Slot& slot = slots_[slot_index];
      slot.request = index;
      slot.done = 0;
      slot.cursor = IovecCursor(request.memory);
      prepare(slot_index);
    }
  }

  // Queues the slot's next operation: the part of its request not moved
  // yet. Precondition: the slot has no operation in flight.
  void prepare(std::size_t slot_index) {
    Slot& slot = slots_[slot_index];
    const IoRequest& request = requests_[slot.request];
    const std::span<const iovec> window = slot.cursor.window(
        slot.scratch, max_iovecs_per_call,
        direction_ == Direction::write ? max_write_bytes_per_call : max_bytes_per_call);
    // At most ring_depth operations are outstanding and each holds at most
    // one SQ entry, so the SQ cannot be full here.
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) throw_errno(EBUSY, "io_uring_get_sqe: submission queue full");
    const auto offset = static_cast<std::uint64_t>(request.file_offset) + slot.done;
    slot.vectored = window.size() > 1;
    if (!slot.vectored) {
      // max_bytes_per_call keeps the length within unsigned.
      const auto length = static_cast<unsigned>(window[0].iov_len);
      if (direction_ == Direction::write) {
        io_uring_prep_write(sqe, fd_, window[0].iov_base, length, offset);
      } else {
        io_uring_prep_read(sqe, fd_, window[0].iov_base, length, offset);
      }
    } else {
      const auto count = static_cast<unsigned>(window.size());
      if (direction_ == Direction::write) {
        io_uring_prep_writev(sqe, fd_, window.data(), count, offset);
      } else {
        io_uring_prep_readv(sqe, fd_, window.data(), count, offset);
      }
    }
    io_uring_sqe_set_data64(sqe, slot_index);
    ++in_flight_;
  }

  // Submits what is queued and sleeps in the kernel until at least one
  // completion is there.
  void submit_and_wait() {
    const int result = io_uring_submit_and_wait(&ring_, 1);
    // -EINTR: a signal cut the wait short; whatever is queued stays queued
    // and the next call submits it.
    if (result >= 0 || result == -EINTR) return;
    if (result == -EAGAIN || result == -EBUSY) {
      // The kernel lacks resources for more right now. Completions of what it
      // already owns free them: sleep until one arrives.
      if (kernel_owned() > 0) {
        io_uring_cqe* cqe = nullptr;
        const int waited = io_uring_wait_cqe(&ring_, &cqe);
        if (waited < 0 && waited != -EINTR) throw_errno(-waited, "io_uring_wait_cqe");
        return;
      }
      // Nothing of ours to wait for: back off briefly (sleeping, not
      // spinning) a bounded number of times before giving up.
      if (busy_retries_ < max_busy_retries) {
        std::this_thread::sleep_for(std::chrono::microseconds(std::int64_t{1} << busy_retries_));
        ++busy_retries_;
        return;
      }
    }
    throw_errno(-result, "io_uring_submit_and_wait");
  }

  void harvest() {
    io_uring_cqe* cqes[UringBackend::ring_depth];
    const unsigned count = io_uring_peek_batch_cqe(&ring_, cqes, UringBackend::ring_depth);
    for (unsigned i = 0; i < count; ++i) {
      completions_[i] = {io_uring_cqe_get_data64(cqes[i]), cqes[i]->res};
    }
    // Hand the entries back before acting on them, so that an exception
    // thrown while acting cannot make abandon() count them twice.
    io_uring_cq_advance(&ring_, count);
    in_flight_ -= count;
    if (count > 0) busy_retries_ = 0;
    for (unsigned i = 0; i < count; ++i) complete(completions_[i]);
  }

  void complete(const Completion& completion) {
    const std::size_t slot_index = completion.slot;
    Slot& slot = slots_[slot_index];
    const int result = completion.result;
    if (result == -EAGAIN || result == -EINTR) {
      if (failed()) return release(slot_index);
      return prepare(slot_index);  // the same range again
    }
    if (result < 0) {
      record_failure(slot, -result);
      return release(slot_index);
    }
    if (result == 0) {
      if (direction_ == Direction::read) return finish(slot_index);  // end of file
      // A write of a non-empty range that moves nothing would loop forever;
      // the kernel does not do this for files, so treat it as a device error.
      record_failure(slot, EIO);
      return release(slot_index);
    }
    slot.cursor.advance(static_cast<std::size_t>(result));
    slot.done += static_cast<std::size_t>(result);
    if (slot.cursor.remaining() == 0) return finish(slot_index);
    if (failed()) return release(slot_index);
    // A short transfer, or a write longer than max_write_bytes_per_call:
    // continue with the remainder.
    prepare(slot_index);
  }

  void finish(std::size_t slot_index) {
    const Slot& slot = slots_[slot_index];
    if (direction_ == Direction::read) bytes_read_[slot.request] = slot.done;
    release(slot_index);
  }

  // Cannot allocate: free_slots_ has room for every slot.
  void release(std::size_t slot_index) noexcept { free_slots_.push_back(slot_index); }

  void record_failure(const Slot& slot, int system_errno) {
    if (failed()) return;
    const IoRequest& request = requests_[slot.request];
    std::string what = "io_uring ";
    what += direction_ == Direction::write ? (slot.vectored ? "writev" : "write")
                                           : (slot.vectored ? "readv" : "read");
    what += " fd " + std::to_string(fd_) + " at offset " +
            std::to_string(request.file_offset + static_cast<std::int64_t>(slot.done)) + " (" +
            std::to_string(slot.cursor.remaining()) + " bytes)";
    failure_ = {system_errno, std::move(what)};
  }

  // Called while an exception leaves run(): waits until the kernel owns no
  // operation of this call, because the memory they use may go away once
  // the exception reaches the caller.
  void abandon() noexcept {
    for (unsigned owned = kernel_owned(); owned > 0;) {
      io_uring_cqe* cqe = nullptr;
      const int result = io_uring_wait_cqe(&ring_, &cqe);
      if (result == -EINTR) continue;
      if (result < 0) {
        // The kernel may still write into memory the caller is about to
        // free; returning would corrupt it silently.
        std::fprintf(stderr, "flowio: io_uring_wait_cqe failed (errno %d) with I/O in flight\n",
                     -result);
        std::terminate();
      }
      io_uring_cqe_seen(&ring_, cqe);
      --owned;
      --in_flight_;
    }
    // Entries still queued in the SQ would be submitted by this thread's
    // next call and point into this call's memory: drop the ring with them.
    if (in_flight_ > 0) thread_ring_.discard();
  }

  static constexpr int max_busy_retries = 12;  // about 4 ms of sleeping in all

  ThreadRing& thread_ring_;
  io_uring& ring_;
  const int fd_;
  const Direction direction_;
  const std::span<const IoRequest> requests_;
  const std::span<std::size_t> bytes_read_;
  // Sized once: slots never move while operations refer to their scratch.
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_slots_;
  Completion completions_[UringBackend::ring_depth];
  std::size_t next_request_ = 0;
  unsigned in_flight_ = 0;  // operations queued or submitted, not yet reaped
  int busy_retries_ = 0;
  Failure failure_;
};

}  // namespace

bool UringBackend::available() {
  static const bool result = probe_kernel();
  return result;
}

void UringBackend::write(int fd, std::span<const IoRequest> requests) {
  check_requests(requests);
  if (requests.empty()) return;
  // A lone request gains nothing from the ring: the call waits for it
  // anyway, and a buffered write submitted to io_uring is often handed to a
  // kernel worker thread, two context switches a plain pwritev avoids.
  if (requests.size() == 1) return fallback_.write(fd, requests);
  io_uring* ring = this_thread_ring.get();
  if (ring == nullptr) return fallback_.write(fd, requests);
  RingTransfer(this_thread_ring, *ring, fd, Direction::write, requests, {}).run();
}

void UringBackend::read(int fd, std::span<const IoRequest> requests,
                        std::span<std::size_t> bytes_read) {
  check_read_requests(requests, bytes_read);
  if (requests.empty()) return;
  if (requests.size() == 1) return fallback_.read(fd, requests, bytes_read);
  io_uring* ring = this_thread_ring.get();
  if (ring == nullptr) return fallback_.read(fd, requests, bytes_read);
  RingTransfer(this_thread_ring, *ring, fd, Direction::read, requests, bytes_read).run();
}

}  // namespace flowio::io
