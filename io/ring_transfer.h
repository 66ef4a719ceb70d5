// RingTransfer: one backend call's requests moved through an io_uring
// ring, as a state machine that says nothing about who waits for the
// completions: UringBackend (uring_backend.h) waits in the kernel on the
// calling thread's own ring, UringQueue (uring_queue.h) lets the progress
// engine reap them from the I/O thread's ring.
//
// Up to UringBackend::ring_depth requests are in flight at once; short
// transfers are continued for the remainder, and completions with -EAGAIN
// or -EINTR are queued again as they were. After the first failure no new
// request starts; the failure is kept for throw_if_failed().
//
// Lifetime: the kernel reads an operation's iovec array (and reads or
// writes the memory it points to) until the operation's completion has been
// reaped. The iovecs are either the caller's, borrowed for the transfer, or
// a slot's `scratch`, which is rebuilt only after the slot's completion has
// been reaped. Whoever drives the transfer must not let it go while
// kernel_owned() is not zero.
//
// Memory ordering: rings are set up without SQPOLL, so the kernel reads
// submission entries only inside io_uring_enter calls, made after the
// entries (and the iovecs they point to) were written; a thread that
// submits another thread's entries is ordered after it by the mutex they
// share. Completions may be posted from other CPUs (io-wq workers):
// io_uring_peek_batch_cqe reads the CQ tail with an acquire load that pairs
// with the kernel's release when it posts, so once a completion is seen,
// the data the kernel read into our buffers is visible too.
// io_uring_cq_advance hands entries back with a release store, after they
// have been copied out.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/iovec_cursor.h"
#include "io/storage_backend.h"

namespace flowio::io {

enum class Direction { read, write };

// Not thread safe: whoever drives it serializes its calls (and those of
// the ring's other users).
class RingTransfer {
 public:
  // At most `depth` requests in flight; the ring must have at least that
  // many entries, and no other transfer may use it meanwhile.
  RingTransfer(io_uring& ring, unsigned depth, int fd, Direction direction,
               std::span<const IoRequest> requests, std::span<std::size_t> bytes_read);

  // Queues (does not submit) an operation for each request that fits in a
  // free slot, unless the transfer failed.
  void start_requests();
  // What a completion entry says, copied out of the CQ.
  struct Completion {
    std::uint64_t slot;
    int result;
  };
  // Copies out every completion in `ring`'s CQ into `into` and hands the
  // entries back; returns how many there were. Touches the CQ only, so one
  // thread may take while another queues and submits.
  static unsigned take(io_uring& ring, std::vector<Completion>& into);
  // Acts on completions taken from this transfer's ring (finishing,
  // continuing or queueing requests again).
  void act(std::span<const Completion> completions);
  // take() then act(): for a ring its one thread both submits to and reaps.
  unsigned harvest();
  // Keeps `system_errno` as the transfer's failure, unless it has one.
  void fail(int system_errno, std::string what);

  bool failed() const noexcept { return failure_.system_errno != 0; }
  // Operations queued or submitted whose completion has not been reaped.
  unsigned in_flight() const noexcept { return in_flight_; }
  // Of those, the ones the kernel has consumed from the SQ: entries still
  // in the SQ are read only inside an io_uring_enter call.
  unsigned kernel_owned() const noexcept { return in_flight_ - io_uring_sq_ready(&ring_); }
  // Every request moved (or the transfer failed and nothing is in flight).
  bool done() const noexcept {
    return in_flight_ == 0 && (failed() || next_request_ == requests_.size());
  }
  // Every request has been given a slot (or was empty).
  bool all_started() const noexcept { return next_request_ == requests_.size(); }
  // Throws IoError with the errno of the first failure, if any.
  void throw_if_failed() const;
  // A completion was seen since the last call: the kernel is making
  // progress (for bounding retries of a refused submission).
  bool progressed() noexcept;

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
  void prepare(std::size_t slot_index);
  void complete(const Completion& completion);
  void finish(std::size_t slot_index);
  void release(std::size_t slot_index) noexcept { free_slots_.push_back(slot_index); }
  void record_failure(const Slot& slot, int system_errno);

  io_uring& ring_;
  const int fd_;
  const Direction direction_;
  const std::span<const IoRequest> requests_;
  const std::span<std::size_t> bytes_read_;
  const CallLimit limit_;
  // Sized once: slots never move while operations refer to their scratch.
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_slots_;
  std::vector<Completion> taken_;  // harvest()'s, kept for its capacity
  std::size_t next_request_ = 0;
  unsigned in_flight_ = 0;
  bool progressed_ = false;
  Failure failure_;
};

}  // namespace flowio::io
