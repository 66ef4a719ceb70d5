// FcntlLock: the file system's own byte-range locks (open file
// description locks, fcntl F_OFD_SETLK), behind the same interface as
// flowio's, for comparison (bench/locks) and for file systems whose locks
// are known to work. This is what MPICH's MPI-IO takes in atomic mode.
//
// Each lease locks through its own open file description of the file, so
// that two leases of one process exclude each other as leases of two
// processes do (classic POSIX record locks belong to the process and
// would not). A lock that is free is taken at the call; one that is not
// is waited for in the kernel (F_OFD_SETLKW) by a thread of this lock,
// started at the first such wait: a file-system lock cannot be waited for
// otherwise. Several waits queue for that thread, in order.
#pragma once

#include <memory>
#include <string>

#include "sync/lock.h"

namespace flowio::sync {

class FcntlLock final : public Lock {
 public:
  // `path` is opened read-write where permitted (exclusive locks need it),
  // read-only otherwise. With `ranges` false every lease covers the whole
  // file. Throws IoError when `path` cannot be opened. Not collective.
  FcntlLock(const std::string& path, bool ranges);
  // Stops the waiting thread (after close(), it has nothing to wait for).
  ~FcntlLock() override;

  // Throws IoError when fcntl fails at the call (for instance ENOLCK or
  // EINVAL where the file system has no locks); a failed wait arrives
  // through the Future.
  Future<Lease> acquire(ByteRange range, LockMode mode) override;
  // Local: throws UsageError if this process holds or awaits a lease.
  void close() override;
  std::string name() const override { return "fcntl"; }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace flowio::sync
