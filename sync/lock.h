// Lock, Lease, ByteRange, LockMode: the interface every lock of sync/
// offers, whatever its algorithm (sync/lock_settings.h lists them).
//
//   flowio::Future<sync::Lease> pending = lock.acquire({0, 4096}, LockMode::exclusive);
//   sync::Lease held = pending.get();   // or pending.then(...): nothing blocks
//   ... access bytes [0, 4096) of the file ...
//   held.release();                     // or let it go out of scope
//
// A lock is shared by the processes of a communicator and created
// collectively. The holder of a lease is the process, not the thread: any
// thread may release it. Locks over a whole resource (the mutexes) ignore
// the range and treat every lease as exclusive.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "flowio/future.h"

namespace flowio::sync {

enum class LockMode { shared, exclusive };

// Bytes [begin, end) of a file; empty when end <= begin.
struct ByteRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;

  // Every byte, however far the file grows.
  static constexpr ByteRange everything() { return {0, std::numeric_limits<std::int64_t>::max()}; }
  bool overlaps(const ByteRange& other) const {
    return begin < other.end && other.begin < end && begin < end && other.begin < other.end;
  }
};

// A held lock, released once: by release() or by the destructor (so that
// an exception thrown inside a locked region releases it). Releasing only
// starts the release: it never blocks, and the waiter it lets in is told by
// the progress thread. Move-only.
class Lease {
 public:
  Lease() = default;
  explicit Lease(std::function<void()> release) : release_(std::move(release)) {}
  Lease(Lease&& other) noexcept : release_(std::exchange(other.release_, nullptr)) {}
  Lease& operator=(Lease&& other) noexcept {
    if (this != &other) {
      release();
      release_ = std::exchange(other.release_, nullptr);
    }
    return *this;
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { release(); }

  // True until released (a default-constructed Lease holds nothing).
  bool held() const noexcept { return release_ != nullptr; }
  void release() {
    if (auto release = std::exchange(release_, nullptr)) release();
  }

 private:
  std::function<void()> release_;
};

// Thread safety: acquire() may be called from any thread, several at once;
// close() from one thread, when this process holds no lease and waits for
// none.
class Lock {
 public:
  virtual ~Lock() = default;

  // Starts acquiring `range` in `mode` for this process. The Future is
  // ready (on the progress thread) once the lease is held, or holds an
  // MpiError / IoError if the algorithm failed; a failed lock fails every
  // later acquire too. Continuations attached with then() run on the
  // progress thread and must not block.
  virtual Future<Lease> acquire(ByteRange range, LockMode mode) = 0;

  // Collective over the lock's communicator. Waits until the messages and
  // one-sided operations this process started have completed and every
  // process has called close(), then frees the lock's MPI resources.
  // Throws UsageError if this process still holds or awaits a lease.
  virtual void close() = 0;

  // The algorithm's name, as the hint flowio_lock spells it.
  virtual std::string name() const = 0;
};

}  // namespace flowio::sync
