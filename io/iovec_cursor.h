// Walks a borrowed iovec array as one stream of bytes, so that a transfer
// the kernel cut short can be continued exactly where it stopped.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace flowio::io {

// The most iovecs one preadv/pwritev or IORING_OP_READV/WRITEV accepts
// (UIO_MAXIOV on Linux; more gives EINVAL).
inline constexpr std::size_t max_iovecs_per_call = 1024;

// The most bytes one call is asked to move. Linux moves at most
// MAX_RW_COUNT (2 GiB - 4 KiB) per call and an io_uring completion reports
// its result as an int; 1 GiB stays clear of both.
inline constexpr std::size_t max_bytes_per_call = std::size_t{1} << 30;

// The most bytes one write call that creates pages is asked to move. On
// kernels whose page cache uses large folios for buffered writes (ext4 on
// Linux 6.x), the length of the write that creates the pages sets their
// folio size, and every later small write into a folio walks all of its
// blocks (ext4_block_write_begin): after a 2 MiB write, the 256-byte writes
// HDF5 makes into the same region cost 35% more CPU than after 512 KiB ones
// (perf of bench/hdf5_io on one rank; ROMIO writes at most 512 KiB at a
// time there). Pages that exist keep their folios, so a write below the
// file's end goes whole: four 512 KiB writes over a resident 2 MiB cost
// 45 us against 42 for one (this machine, medians of 200).
inline constexpr std::size_t max_write_bytes_per_call = std::size_t{512} << 10;

// The most bytes a write at `offset` is asked to move in one call, in a
// file of `file_size` bytes: the pages before the end whole (and up to
// max_write_bytes_per_call past it), new pages max_write_bytes_per_call at
// a time.
inline std::size_t max_write_bytes_at(std::int64_t offset, std::int64_t file_size) {
  const std::int64_t existing = file_size - offset;
  if (existing <= static_cast<std::int64_t>(max_write_bytes_per_call)) {
    return max_write_bytes_per_call;
  }
  return std::min(static_cast<std::size_t>(existing), max_bytes_per_call);
}

// How many bytes one call of a transfer on a file moves at most at each
// offset: max_bytes_per_call for reads; max_write_bytes_at for writes,
// the file's size asked once (fstat) when a write of `longest` bytes could
// be split at all (unknown, every write is split as new pages are).
class CallLimit {
 public:
  CallLimit(int fd, bool writing, std::size_t longest);
  std::size_t at(std::int64_t offset) const {
    return writing_ ? max_write_bytes_at(offset, file_size_) : max_bytes_per_call;
  }

 private:
  bool writing_;
  std::int64_t file_size_ = 0;
};

// Not thread safe; one cursor belongs to one transfer. The iovec array is
// borrowed for the cursor's lifetime and never written.
class IovecCursor {
 public:
  IovecCursor() noexcept = default;
  explicit IovecCursor(std::span<const iovec> memory) noexcept;

  // Bytes not yet moved.
  std::size_t remaining() const noexcept { return remaining_; }

  // The next piece to move: at most `max_iovecs` iovecs and `max_bytes`
  // bytes, starting at the first byte not yet moved. Empty when nothing
  // remains. Where no iovec needs adjusting the result points into the
  // borrowed array; otherwise the adjusted copy is built in `scratch` and the
  // result points there, valid until `scratch` is next changed.
  std::span<const iovec> window(std::vector<iovec>& scratch,
                                std::size_t max_iovecs = max_iovecs_per_call,
                                std::size_t max_bytes = max_bytes_per_call) const;

  // Marks `bytes` more as moved. Precondition: bytes <= remaining().
  void advance(std::size_t bytes) noexcept;

 private:
  void skip_empty() noexcept;

  std::span<const iovec> memory_;
  std::size_t index_ = 0;   // first iovec not completely moved
  std::size_t offset_ = 0;  // bytes of memory_[index_] already moved
  std::size_t remaining_ = 0;
};

}  // namespace flowio::io
