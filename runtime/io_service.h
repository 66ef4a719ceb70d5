// IoService: the thread that performs aggregators' file I/O, so that a
// window's read or write never occupies a oneTBB worker: the graph hands
// the work over (async_node) and gets the window back when it is done.
// The thread owns its io_uring ring (one ring per I/O thread) and sleeps
// on a condition variable when there is nothing to do.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace flowio::runtime {

// Thread safety: post() may be called from any thread.
class IoService {
 public:
  IoService();
  IoService(const IoService&) = delete;
  IoService& operator=(const IoService&) = delete;
  // Runs what was posted, then stops the thread.
  ~IoService();

  // Runs `work` on the I/O thread, in order of posting. `work` must not
  // throw.
  void post(std::function<void()> work);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace flowio::runtime
