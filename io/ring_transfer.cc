#include "io/ring_transfer.h"

#include <algorithm>
#include <cerrno>

#include "flowio/error.h"
#include "io/file_descriptor.h"

namespace flowio::io {

namespace {

std::size_t longest_request(std::span<const IoRequest> requests) {
  std::size_t longest = 0;
  for (const IoRequest& request : requests) longest = std::max(longest, request.bytes);
  return longest;
}

}  // namespace

RingTransfer::RingTransfer(io_uring& ring, unsigned depth, int fd, Direction direction,
                           std::span<const IoRequest> requests, std::span<std::size_t> bytes_read)
    : ring_(ring),
      fd_(fd),
      direction_(direction),
      requests_(requests),
      bytes_read_(bytes_read),
      limit_(fd, direction == Direction::write, longest_request(requests)),
      slots_(std::min<std::size_t>(requests.size(), depth)) {
  free_slots_.reserve(slots_.size());
  // No more completions than operations in flight, at most one per slot:
  // taking never allocates.
  taken_.reserve(slots_.size());
  for (std::size_t i = slots_.size(); i > 0; --i) free_slots_.push_back(i - 1);
}

void RingTransfer::start_requests() {
  while (!failed() && next_request_ < requests_.size() && !free_slots_.empty()) {
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

// Queues the slot's next operation: the part of its request not moved yet.
// Precondition: the slot has no operation in flight.
void RingTransfer::prepare(std::size_t slot_index) {
  Slot& slot = slots_[slot_index];
  const IoRequest& request = requests_[slot.request];
  const auto offset = static_cast<std::uint64_t>(request.file_offset) + slot.done;
  const std::span<const iovec> window = slot.cursor.window(
      slot.scratch, max_iovecs_per_call, limit_.at(static_cast<std::int64_t>(offset)));
  // At most one operation per slot is outstanding and each holds at most
  // one SQ entry, so the SQ cannot be full here.
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) throw_errno(EBUSY, "io_uring_get_sqe: submission queue full");
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

unsigned RingTransfer::take(io_uring& ring, std::vector<Completion>& into) {
  constexpr unsigned kBatch = 256;
  io_uring_cqe* cqes[kBatch];
  unsigned total = 0;
  for (;;) {
    const unsigned count = io_uring_peek_batch_cqe(&ring, cqes, kBatch);
    if (count == 0) return total;
    for (unsigned i = 0; i < count; ++i) {
      into.push_back({io_uring_cqe_get_data64(cqes[i]), cqes[i]->res});
    }
    io_uring_cq_advance(&ring, count);
    total += count;
  }
}

void RingTransfer::act(std::span<const Completion> completions) {
  // Counted before acting, so that an exception thrown while acting cannot
  // make them count twice.
  in_flight_ -= static_cast<unsigned>(completions.size());
  if (!completions.empty()) progressed_ = true;
  for (const Completion& completion : completions) complete(completion);
}

unsigned RingTransfer::harvest() {
  taken_.clear();
  const unsigned count = take(ring_, taken_);
  act(taken_);
  return count;
}

bool RingTransfer::progressed() noexcept {
  const bool seen = progressed_;
  progressed_ = false;
  return seen;
}

void RingTransfer::complete(const Completion& completion) {
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
  // A short transfer, or a write cut by limit_:
  // continue with the remainder.
  prepare(slot_index);
}

void RingTransfer::finish(std::size_t slot_index) {
  const Slot& slot = slots_[slot_index];
  if (direction_ == Direction::read) bytes_read_[slot.request] = slot.done;
  release(slot_index);
}

void RingTransfer::fail(int system_errno, std::string what) {
  if (!failed()) failure_ = {system_errno, std::move(what)};
}

void RingTransfer::record_failure(const Slot& slot, int system_errno) {
  if (failed()) return;
  const IoRequest& request = requests_[slot.request];
  std::string what = "io_uring ";
  what += direction_ == Direction::write ? (slot.vectored ? "writev" : "write")
                                         : (slot.vectored ? "readv" : "read");
  what += " " + describe_fd(fd_) + " at offset " +
          std::to_string(request.file_offset + static_cast<std::int64_t>(slot.done)) + " (" +
          std::to_string(slot.cursor.remaining()) + " bytes)";
  failure_ = {system_errno, std::move(what)};
}

void RingTransfer::throw_if_failed() const {
  if (failed()) throw_errno(failure_.system_errno, failure_.what);
}

}  // namespace flowio::io
