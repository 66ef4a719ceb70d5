// IoService: the thread that performs aggregators' file I/O, so that a
// window's read or write never occupies a oneTBB worker: the graph hands
// the work over (Executor::run_io) and gets the window back when it is
// done. The thread sleeps on a condition variable when there is nothing to
// do.
//
// Its io_uring transfers go through one ring (io/uring_queue.h) whose
// eventfd the progress engine watches: the progress thread wakes on their
// completions and reaps them, as it does for MPI requests, and wakes this
// thread only when it has more to submit or its transfer is done. Where
// the kernel refuses io_uring (or FLOWIO_IO_BACKEND=posix), there is no
// ring and the thread's I/O is plain system calls.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "io/uring_queue.h"
#include "runtime/engine/progress.h"

namespace flowio::runtime {

// Thread safety: post() may be called from any thread.
class IoService {
 public:
  // Watches the ring's completions on `progress`, which must outlive this.
  explicit IoService(Progress& progress);
  IoService(const IoService&) = delete;
  IoService& operator=(const IoService&) = delete;
  // Runs what was posted, then stops the thread. Must not run on the
  // progress thread.
  ~IoService();

  // Runs `work` on the I/O thread, in order of posting. `work` must not
  // throw.
  void post(std::function<void()> work);

  // Whether the thread's io_uring transfers are reaped by the progress
  // engine (false: no ring, see above).
  bool reaped_by_progress() const { return ring_ != nullptr; }

 private:
  void run();

  Progress& progress_;
  const std::unique_ptr<io::UringQueue> ring_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace flowio::runtime
