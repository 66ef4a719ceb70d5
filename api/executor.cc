#include "flowio/executor.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace flowio {
namespace {

class InlineExecutor final : public Executor {
 public:
  void execute(std::function<void()> task) override { task(); }
};

// A pool that never makes a task wait for a thread: a queued task is
// matched with an idle thread, or a new one. Waiting threads block; none
// spins.
class ContinuationPool final : public Executor {
 public:
  void execute(std::function<void()> task) override {
    std::unique_lock lock(mutex_);
    tasks_.push_back(std::move(task));
    // Every queued task needs a thread of its own that is not running
    // another task: a task may wait for the one queued behind it.
    if (tasks_.size() <= idle_) {
      task_queued_.notify_one();
      return;
    }
    try {
      std::thread([this] { serve(); }).detach();
    } catch (const std::system_error&) {
      std::function<void()> here = std::move(tasks_.back());
      tasks_.pop_back();
      lock.unlock();
      here();
    }
  }

 private:
  static constexpr std::chrono::seconds kIdleLifetime{1};

  void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (tasks_.empty()) {
        ++idle_;
        const bool queued =
            task_queued_.wait_for(lock, kIdleLifetime, [this] { return !tasks_.empty(); });
        --idle_;
        if (!queued) return;
      }
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      // The task's captures (Futures, buffers) are released before the
      // lock is taken again: their destructors may call execute().
      task = nullptr;
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable task_queued_;
  std::deque<std::function<void()>> tasks_;
  std::size_t idle_ = 0;  // threads waiting in serve() for a task
};

}  // namespace

// Both never destroyed: continuations may still run on them while the
// process's static objects are destroyed.
Executor& inline_executor() noexcept {
  static auto* executor = new InlineExecutor();
  return *executor;
}

Executor& continuation_pool() noexcept {
  static auto* pool = new ContinuationPool();
  return *pool;
}

}  // namespace flowio
