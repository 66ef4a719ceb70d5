#include "io/posix_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "io/file_descriptor.h"
#include "io/iovec_cursor.h"

namespace flowio::io {
namespace {

enum class Direction { read, write };

[[noreturn]] void throw_transfer_error(int system_errno, Direction direction, bool vectored, int fd,
                                       std::int64_t offset, std::size_t bytes) {
  std::string what = direction == Direction::write ? (vectored ? "pwritev" : "pwrite")
                                                   : (vectored ? "preadv" : "pread");
  what += " " + describe_fd(fd) + " at offset " + std::to_string(offset) + " (" +
          std::to_string(bytes) + " bytes)";
  throw_errno(system_errno, what);
}

// The bytes one call moved, or 0 at end of file (reads) and -1 when a
// signal interrupted it (to be repeated). Throws IoError for a failure.
ssize_t moved_by(ssize_t moved, Direction direction, bool vectored, int fd, off_t offset,
                 std::size_t remaining) {
  if (moved < 0) {
    const int system_errno = errno;  // read before anything else can change it
    if (system_errno == EINTR) return -1;
    throw_transfer_error(system_errno, direction, vectored, fd, offset, remaining);
  }
  if (moved == 0 && direction == Direction::write) {
    // A write of a non-empty range that moves nothing would loop forever;
    // the kernel does not do this for files, so treat it as a device error.
    throw_transfer_error(EIO, direction, vectored, fd, offset, remaining);
  }
  return moved;
}

// Moves a request of one iovec (every small call) without a cursor.
std::size_t transfer_one(int fd, const IoRequest& request, Direction direction) {
  char* const data = static_cast<char*>(request.memory[0].iov_base);
  const std::size_t length = request.memory[0].iov_len;
  const CallLimit limit(fd, direction == Direction::write, length);
  std::size_t done = 0;
  while (done < length) {
    const off_t offset = static_cast<off_t>(request.file_offset) + static_cast<off_t>(done);
    const std::size_t bytes = std::min(length - done, limit.at(offset));
    const ssize_t moved =
        moved_by(direction == Direction::write ? ::pwrite(fd, data + done, bytes, offset)
                                               : ::pread(fd, data + done, bytes, offset),
                 direction, false, fd, offset, length - done);
    if (moved == 0) break;  // end of file
    if (moved > 0) done += static_cast<std::size_t>(moved);
  }
  return done;
}

// Moves one request; returns the bytes moved, which is less than
// request.bytes only for a read that reached end of file.
std::size_t transfer(int fd, const IoRequest& request, Direction direction,
                     std::vector<iovec>& scratch) {
  if (request.memory.size() == 1) return transfer_one(fd, request, direction);
  IovecCursor cursor(request.memory);
  const CallLimit limit(fd, direction == Direction::write, cursor.remaining());
  std::size_t done = 0;
  while (cursor.remaining() > 0) {
    const off_t offset = static_cast<off_t>(request.file_offset) + static_cast<off_t>(done);
    const std::span<const iovec> piece =
        cursor.window(scratch, max_iovecs_per_call, limit.at(offset));
    const int count = static_cast<int>(piece.size());
    const ssize_t moved =
        moved_by(direction == Direction::write ? ::pwritev(fd, piece.data(), count, offset)
                                               : ::preadv(fd, piece.data(), count, offset),
                 direction, true, fd, offset, cursor.remaining());
    if (moved == 0) break;  // end of file
    if (moved < 0) continue;
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
