// MutexProtocol: one process's side of a distributed mutual-exclusion
// algorithm (waitlist_mutex.h, hybrid_mutex.h, one_sided_mutex.h,
// mcs_mutex.h). MutexLock (mutex_lock.h) drives it: it queues the
// process's threads and runs one acquisition at a time: acquire, then,
// once granted, release, then (once released) maybe acquire again.
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace flowio::sync {

class MutexProtocol {
 public:
  // Called once, on the progress thread (or on the calling thread when no
  // wait was needed), with null or the error that ended the step. Must not
  // block.
  using Done = std::function<void(std::exception_ptr)>;

  virtual ~MutexProtocol() = default;
  // Starts acquiring for this process; `granted` runs once it holds the
  // lock.
  virtual void acquire(Done granted) = 0;
  // Starts releasing; `released` runs once the next holder has been told
  // (this process may acquire again after that).
  virtual void release(Done released) = 0;
  // Collective: waits for this process's operations and messages, then
  // for every process, and frees the MPI resources.
  virtual void close() = 0;
  virtual std::string name() const = 0;
};

}  // namespace flowio::sync
