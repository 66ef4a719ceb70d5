#include "io/posix_backend.h"

#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "io/iovec_cursor.h"

namespace flowio::io {
namespace {

enum class Direction { read, write };

[[noreturn]] void throw_transfer_error(int system_errno, Direction direction, bool vectored, int fd,
                                       std::int64_t offset, std::size_t bytes) {
  std::string what = direction == Direction::write ? (vectored ? "pwritev" : "pwrite")
                                                   : (vectored ? "preadv" : "pread");
  what += " fd " + std::to_string(fd) + " at offset " + std::to_string(offset) + " (" +
          std::to_string(bytes) + " bytes)";
  throw_errno(system_errno, what);
}

// Moves one request; returns the bytes moved, which is less than
// request.bytes only for a read that reached end of file.
std::size_t transfer(int fd, const IoRequest& request, Direction direction,
                     std::vector<iovec>& scratch) {
  IovecCursor cursor(request.memory);
  std::size_t done = 0;
  while (cursor.remaining() > 0) {
    const std::span<const iovec> piece = cursor.window(
        scratch, max_iovecs_per_call,
        direction == Direction::write ? max_write_bytes_per_call : max_bytes_per_call);
    const off_t offset = static_cast<off_t>(request.file_offset) + static_cast<off_t>(done);
    ssize_t moved;
    if (piece.size() == 1) {
      moved = direction == Direction::write
                  ? ::pwrite(fd, piece[0].iov_base, piece[0].iov_len, offset)
                  : ::pread(fd, piece[0].iov_base, piece[0].iov_len, offset);
    } else {
      const int count = static_cast<int>(piece.size());
      moved = direction == Direction::write ? ::pwritev(fd, piece.data(), count, offset)
                                            : ::preadv(fd, piece.data(), count, offset);
    }
    if (moved < 0) {
      const int system_errno = errno;  // read before anything else can change it
      if (system_errno == EINTR) continue;
      throw_transfer_error(system_errno, direction, piece.size() > 1, fd, offset,
                           cursor.remaining());
    }
    if (moved == 0) {
      if (direction == Direction::read) break;  // end of file
      // A write of a non-empty range that moves nothing would loop forever;
      // the kernel does not do this for files, so treat it as a device error.
      throw_transfer_error(EIO, direction, piece.size() > 1, fd, offset, cursor.remaining());
    }
    cursor.advance(static_cast<std::size_t>(moved));
    done += static_cast<std::size_t>(moved);
  }
  return done;
}

}  // namespace

void PosixBackend::write(int fd, std::span<const IoRequest> requests) {
  check_requests(requests);
  std::vector<iovec> scratch;
  for (const IoRequest& request : requests) transfer(fd, request, Direction::write, scratch);
}

void PosixBackend::read(int fd, std::span<const IoRequest> requests,
                        std::span<std::size_t> bytes_read) {
  check_read_requests(requests, bytes_read);
  std::vector<iovec> scratch;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    bytes_read[i] = transfer(fd, requests[i], Direction::read, scratch);
  }
}

}  // namespace flowio::io
