#include "sync/fcntl_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/lock_regions.h"

namespace flowio::sync {

struct FcntlLock::State : std::enable_shared_from_this<State> {
  struct Wait {
    int fd;
    struct flock region;
    Promise<Lease> promise;
  };

  std::string path;
  bool ranges = true;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int> spare;  // descriptors of released leases, for reuse
  std::deque<Wait> waits;
  std::size_t leases = 0;  // held or awaited
  bool stopping = false;
  std::thread waiter;

  ~State() {
    for (const int fd : spare) ::close(fd);
  }

  // A descriptor no lease holds a lock through.
  int descriptor() {
    {
      std::lock_guard lock(mutex);
      if (!spare.empty()) {
        const int fd = spare.back();
        spare.pop_back();
        return fd;
      }
    }
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_errno(errno, "open " + path + " for fcntl locks");
    return fd;
  }

  Lease lease(int fd, struct flock region) {
    return Lease([self = shared_from_this(), fd, region]() mutable {
      region.l_type = F_UNLCK;
      // Unlocking a lock this description holds cannot fail on Linux but
      // for EINTR; the descriptor is reused only when it succeeded.
      int code = 0;
      do {
        code = ::fcntl(fd, F_OFD_SETLK, &region);
      } while (code != 0 && errno == EINTR);
      std::lock_guard lock(self->mutex);
      if (code == 0) {
        self->spare.push_back(fd);
      } else {
        ::close(fd);  // closing drops the description's locks
      }
      --self->leases;
      self->changed.notify_all();
    });
  }

  void wait_in_kernel() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [this] { return stopping || !waits.empty(); });
      if (waits.empty()) return;
      Wait wait = std::move(waits.front());
      waits.pop_front();
      lock.unlock();
      int code = 0;
      do {
        code = ::fcntl(wait.fd, F_OFD_SETLKW, &wait.region);
      } while (code != 0 && errno == EINTR);
      if (code == 0) {
        wait.promise.set_value(lease(wait.fd, wait.region));
      } else {
        const int error = errno;
        ::close(wait.fd);
        {
          std::lock_guard relock(mutex);
          --leases;
          changed.notify_all();
        }
        try {
          throw_errno(error, "fcntl(F_OFD_SETLKW) on " + path);
        } catch (...) {
          wait.promise.set_exception(std::current_exception());
        }
      }
      lock.lock();
    }
  }
};

FcntlLock::FcntlLock(const std::string& path, bool ranges) : state_(std::make_shared<State>()) {
  state_->path = path;
  state_->ranges = ranges;
  ::close(state_->descriptor());  // fail here, not at the first access
}

FcntlLock::~FcntlLock() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->changed.notify_all();
  if (state_->waiter.joinable()) state_->waiter.join();
}

Future<Lease> FcntlLock::acquire(ByteRange range, LockMode mode) {
  struct flock region {};
  region.l_type = mode == LockMode::exclusive ? F_WRLCK : F_RDLCK;
  region.l_whence = SEEK_SET;
  // "To the end of the file" ends where the sieve locks begin
  // (runtime/core/lock_regions.h), however far the file grows below it.
  const bool to_end = !state_->ranges || range.end >= core::kSieveLockBase;
  region.l_start = state_->ranges ? std::min(range.begin, core::kSieveLockBase - 1) : 0;
  region.l_len = (to_end ? core::kSieveLockBase : range.end) - region.l_start;
  if (state_->ranges && range.end <= range.begin) return make_ready_future(Lease());
  const int fd = state_->descriptor();
  {
    std::lock_guard lock(state_->mutex);
    ++state_->leases;
  }
  int code = 0;
  do {
    code = ::fcntl(fd, F_OFD_SETLK, &region);
  } while (code != 0 && errno == EINTR);
  if (code == 0) return make_ready_future(state_->lease(fd, region));
  const int error = errno;
  std::unique_lock lock(state_->mutex);
  if (error != EAGAIN && error != EACCES) {
    --state_->leases;
    lock.unlock();
    ::close(fd);
    throw_errno(error, "fcntl(F_OFD_SETLK) on " + state_->path);
  }
  state_->waits.push_back(State::Wait{fd, region, Promise<Lease>()});
  Future<Lease> future = state_->waits.back().promise.get_future();
  if (!state_->waiter.joinable()) {
    state_->waiter = std::thread([state = state_.get()] { state->wait_in_kernel(); });
  }
  state_->changed.notify_all();
  return future;
}

void FcntlLock::close() {
  std::lock_guard lock(state_->mutex);
  if (state_->leases != 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "closing an fcntl lock that this process holds or waits for");
  }
}

}  // namespace flowio::sync
