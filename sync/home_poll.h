// HomePoll: keeps the process that owns a lock's shared words (its home)
// serving the other processes' one-sided operations on them.
//
// MPICH applies a one-sided operation at its target only inside an MPI
// call made there, and the progress thread makes none while this process
// waits for nothing. So the home registers a poll that calls MPI on every
// pass of the progress thread (at most about 200 us apart when the lock
// is idle) and, when the words changed since the last pass, reports
// itself busy so that the thread keeps passing without backing off while
// the lock is in use.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>

#include "flowio/future.h"
#include "sync/lock_window.h"
#include "sync/progress_port.h"

namespace flowio::sync {

class HomePoll {
 public:
  // Starts polling: words [0, words) of `window` on `comm`, through
  // `progress`. The window and communicator must outlive stop().
  HomePoll(ProgressPort& progress, MPI_Comm comm, const LockWindow& window, int words);
  // Stops, if stop() was not called.
  ~HomePoll();
  HomePoll(const HomePoll&) = delete;
  HomePoll& operator=(const HomePoll&) = delete;

  // Blocks until the poll has run for the last time. Call before freeing
  // the window and the communicator, after every process is done with the
  // lock (Channel::quiesce).
  void stop();

 private:
  struct State {
    MPI_Comm comm;
    const LockWindow* window;
    int words;
    std::uint64_t last = 0;
    // Written by stop() on another thread; the poll reads it on the
    // progress thread. Release/acquire: nothing else is published through
    // it, but the stopped promise below is set after the last pass.
    std::atomic<bool> stopping{false};
    Promise<void> stopped;
  };
  std::shared_ptr<State> state_;
  Future<void> stopped_;
};

}  // namespace flowio::sync
