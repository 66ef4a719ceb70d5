#include "io/sieve_lock.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include "flowio/error.h"
#include "io/file_descriptor.h"
#include "runtime/core/lock_regions.h"

namespace flowio::io {
namespace {

// What fcntl answers where the file system keeps no byte-range locks
// (some network and parallel file systems, FUSE without lock support).
bool means_no_locks(int error) {
  return error == ENOLCK || error == EINVAL || error == EOPNOTSUPP || error == ENOSYS;
}

// The extent [begin, end) is locked at [kShift + begin, kShift + end), past
// every lock of the file's own bytes (runtime/core/lock_regions.h): those
// are other holders' (atomic mode through fcntl, which a process may hold
// while it sieves, programs that lock the file themselves), and sieve locks
// must neither wait for them nor make them wait.
constexpr std::int64_t kShift = core::kSieveLockBase;

// Locks (F_WRLCK) or unlocks (F_UNLCK) the extent [begin, end) through
// `fd`'s open file description, waiting for other descriptions' holders.
// Returns 0 or the errno.
int set_lock(int fd, short type, std::int64_t begin, std::int64_t end) {
  struct flock region {};
  region.l_type = type;
  region.l_whence = SEEK_SET;
  region.l_start = kShift + std::min(begin, kShift - 1);
  // Length 0: to the end of every possible offset.
  region.l_len = end < kShift ? end - begin : 0;
  region.l_pid = 0;  // required of open file description locks
  while (::fcntl(fd, F_OFD_SETLKW, &region) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

}  // namespace

SieveLock::Held::Held(Held&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), begin_(other.begin_), end_(other.end_) {}

SieveLock::Held& SieveLock::Held::operator=(Held&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    begin_ = other.begin_;
    end_ = other.end_;
  }
  return *this;
}

void SieveLock::Held::release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->unlock(begin_, end_);
}

SieveLock::Held SieveLock::lock(std::int64_t begin, std::int64_t end) {
  {
    std::unique_lock lock(mutex_);
    released_.wait(lock, [this] { return !held_ || !available_; });
    if (!available_) return {};
    held_ = true;
  }
  const int error = end > begin ? set_lock(fd_, F_WRLCK, begin, end) : 0;
  if (error == 0) return Held(this, begin, end);
  std::lock_guard lock(mutex_);
  held_ = false;
  released_.notify_all();
  if (means_no_locks(error)) {
    available_ = false;
    return {};
  }
  throw_errno(error, "fcntl(F_OFD_SETLKW) on " + describe_fd(fd_) + " for a sieving write");
}

void SieveLock::unlock(std::int64_t begin, std::int64_t end) {
  // An unlock fails only for a bad descriptor or range, which lock() has
  // used already; the region goes with the descriptor at the latest.
  if (end > begin) set_lock(fd_, F_UNLCK, begin, end);
  std::lock_guard lock(mutex_);
  held_ = false;
  released_.notify_all();
}

bool SieveLock::available() const {
  std::lock_guard lock(mutex_);
  return available_;
}

}  // namespace flowio::io
