#include "io/file_descriptor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <utility>

#include "flowio/error.h"

namespace flowio::io {
namespace {

// Runs a system call that returns -1 and sets errno on failure, repeating it
// when a signal interrupts it; returns its result, or -errno.
template <class Call>
auto retry_on_interrupt(Call call) {
  for (;;) {
    const auto result = call();
    if (result != -1) return result;
    if (errno != EINTR) return static_cast<decltype(result)>(-errno);
  }
}

}  // namespace

std::string describe_fd(int fd) {
  const std::string number = "fd " + std::to_string(fd);
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  std::array<char, PATH_MAX> path{};
  const ssize_t length = ::readlink(link.c_str(), path.data(), path.size());
  if (length <= 0 || static_cast<std::size_t>(length) == path.size()) return number;
  return std::string(path.data(), static_cast<std::size_t>(length)) + " (" + number + ")";
}

FileDescriptor FileDescriptor::open(const std::string& path, int flags, mode_t mode) {
  const int fd = retry_on_interrupt([&] { return ::open(path.c_str(), flags | O_CLOEXEC, mode); });
  if (fd < 0) throw_errno(-fd, "open " + path);
  return FileDescriptor(fd, path, (flags & O_ACCMODE) != O_WRONLY);
}

FileDescriptor::FileDescriptor(FileDescriptor&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      readable_(std::exchange(other.readable_, false)) {}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);  // as in the destructor: see there
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    readable_ = std::exchange(other.readable_, false);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  // A destructor must not throw and has nobody to tell, and the descriptor
  // is released whatever close returns. Code that must know whether the
  // data made it (close can report a deferred write error) calls close()
  // first, which throws.
  if (fd_ >= 0) ::close(fd_);
}

void FileDescriptor::close() {
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) throw_errno(errno, "close " + path_);
}

void FileDescriptor::require_open(const char* operation) const {
  if (fd_ < 0) {
    throw UsageError(ErrorCode::file_closed,
                     std::string(operation) + " on a file descriptor handle that holds none");
  }
}

void FileDescriptor::sync() {
  require_open("fsync");
  const int result = retry_on_interrupt([&] { return ::fsync(fd_); });
  if (result < 0) throw_errno(-result, "fsync " + path_);
}

void FileDescriptor::sync_data() const {
  require_open("fdatasync");
  const int result = retry_on_interrupt([&] { return ::fdatasync(fd_); });
  if (result < 0) throw_errno(-result, "fdatasync " + path_);
}

std::int64_t FileDescriptor::size() const {
  require_open("fstat");
  struct stat status {};
  if (::fstat(fd_, &status) != 0) throw_errno(errno, "fstat " + path_);
  return status.st_size;
}

void FileDescriptor::truncate(std::int64_t size) {
  require_open("ftruncate");
  if (size < 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "ftruncate " + path_ + ": negative size " + std::to_string(size));
  }
  const int result = retry_on_interrupt([&] { return ::ftruncate(fd_, size); });
  if (result < 0) throw_errno(-result, "ftruncate " + path_ + " to " + std::to_string(size));
}

void FileDescriptor::preallocate(std::int64_t size) {
  require_open("fallocate");
  if (size < 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "fallocate " + path_ + ": negative size " + std::to_string(size));
  }
  if (size == 0) return;  // nothing to allocate, and fallocate rejects a zero length
  // Mode 0 allocates the range and extends the size when the range ends past
  // it; it never shrinks the file. Unlike glibc's posix_fallocate, Linux's
  // fallocate reports EOPNOTSUPP instead of writing zeros block by block.
  const int result = retry_on_interrupt([&] { return ::fallocate(fd_, 0, 0, size); });
  if (result == 0) return;
  if (result != -EOPNOTSUPP) {
    throw_errno(-result, "fallocate " + path_ + " to " + std::to_string(size));
  }
  if (this->size() < size) truncate(size);
}

}  // namespace flowio::io
