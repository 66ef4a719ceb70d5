// ProgressPort: how sync/'s algorithms wait. They never block a thread and
// never spin on one of their own: every wait is a group of MPI requests, or
// a poll, handed to the process's progress thread, which calls back when
// the wait is over. The runtime's progress thread (runtime/engine/progress.h)
// implements this port (runtime/engine/lock_progress.h); sync/ sits below the
// runtime and cannot name it.
#pragma once

#include <mpi.h>

#include <functional>
#include <span>
#include <vector>

namespace flowio::sync {

// Thread safety: both members may be called from any thread, including
// from inside a callback they run.
class ProgressPort {
 public:
  virtual ~ProgressPort() = default;

  // Calls done(MPI_SUCCESS, statuses) on the progress thread once every
  // request has completed, or done(error code, statuses) when MPI reports
  // an error. An empty group completes at once, on the calling thread.
  // `done` must not block.
  using Done = std::function<void(int, std::span<const MPI_Status>)>;
  virtual void watch(std::vector<MPI_Request> requests, Done done) = 0;

  // Calls poll() on the progress thread on every pass of its loop until it
  // returns done. While a poll is registered the thread keeps passing, at
  // most about 200 us apart, even with no request outstanding; `busy`
  // makes it pass again at once instead of backing off. poll() must not
  // block.
  enum class PollResult { idle, busy, done };
  using Poll = std::function<PollResult()>;
  virtual void poll(Poll poll) = 0;
};

}  // namespace flowio::sync
