// Future<T> and Promise<T>: the result of an asynchronous flowio operation.
//
// A Future holds, once ready, either a value or an exception. get() waits,
// then returns the value or rethrows the exception (an flowio::Error for
// anything flowio reports). Futures are move-only; each has one consumer.
//
// Thread safety: a Promise may be fulfilled from any thread (a worker, the
// progress thread) while another thread waits on its Future. One Future
// must not be used by two threads at once. Continuations (then) run on an
// Executor (executor.h): flowio's continuation pool unless the caller
// names another. when_all.h waits for many Futures at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "flowio/executor.h"

namespace flowio {

template <typename T>
class Future;
template <typename T>
class Promise;

namespace detail {

// What a Future<void> stores in place of a value.
struct Nothing {};

template <typename T>
using Stored = std::conditional_t<std::is_void_v<T>, Nothing, T>;

template <typename T>
class SharedState {
 public:
  void set_value(Stored<T> value) {
    std::unique_lock lock(mutex_);
    throw_if_satisfied();
    value_.emplace(std::move(value));
    complete(lock);
  }

  void set_exception(std::exception_ptr error) {
    std::unique_lock lock(mutex_);
    throw_if_satisfied();
    error_ = std::move(error);
    complete(lock);
  }

  bool ready() const {
    std::lock_guard lock(mutex_);
    return ready_;
  }

  void wait() const {
    std::unique_lock lock(mutex_);
    ready_changed_.wait(lock, [this] { return ready_; });
  }

  template <typename Rep, typename Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock lock(mutex_);
    return ready_changed_.wait_for(lock, timeout, [this] { return ready_; });
  }

  // Waits, then moves the value out or rethrows the error.
  Stored<T> take() {
    wait();
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
    return std::move(*value_);
  }

  // Runs `continuation` once the state is ready: at once on this thread if
  // it already is, otherwise on the thread that completes it.
  void on_ready(std::function<void()> continuation) {
    std::unique_lock lock(mutex_);
    if (!ready_) {
      continuations_.push_back(std::move(continuation));
      return;
    }
    lock.unlock();
    continuation();
  }

 private:
  void throw_if_satisfied() const {
    if (ready_) throw std::logic_error("flowio::Promise satisfied twice");
  }

  // Continuations run outside the lock so that they may inspect this state.
  void complete(std::unique_lock<std::mutex>& lock) {
    ready_ = true;
    std::vector<std::function<void()>> continuations = std::move(continuations_);
    lock.unlock();
    ready_changed_.notify_all();
    for (auto& continuation : continuations) continuation();
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable ready_changed_;
  bool ready_ = false;
  std::optional<Stored<T>> value_;
  std::exception_ptr error_;
  std::vector<std::function<void()>> continuations_;
};

}  // namespace detail

// The consumer side. Default-constructed and moved-from Futures are not
// valid(); every other member requires valid().
template <typename T>
class Future {
 public:
  Future() = default;
  Future(Future&&) noexcept = default;
  Future& operator=(Future&&) noexcept = default;
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  bool valid() const noexcept { return state_ != nullptr; }

  // True once a value or an exception is stored; never blocks.
  bool ready() const { return state_->ready(); }

  // Blocks until ready.
  void wait() const { state_->wait(); }

  // Blocks until ready or until `timeout` passes; returns ready().
  template <typename Rep, typename Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return state_->wait_for(timeout);
  }

  // Waits, then returns the value or rethrows the stored exception. The
  // Future is no longer valid() afterwards.
  T get() {
    std::shared_ptr<detail::SharedState<T>> state = std::move(state_);
    if constexpr (std::is_void_v<T>) {
      state->take();
    } else {
      return state->take();
    }
  }

  // Returns a Future of `continuation(std::move(*this))`: the continuation
  // receives this Future, ready, and may call get() on it. It runs on
  // flowio's continuation pool (executor.h), where it may block, even on
  // another flowio Future; an exception it throws is stored in the
  // returned Future. The continuation may be move-only.
  template <typename F>
  auto then(F continuation) -> Future<std::invoke_result_t<F, Future<T>>> {
    return then(continuation_pool(), std::move(continuation));
  }

  // The same, with the continuation run through `executor`, which must
  // live until it has run. inline_executor() runs it on the thread that
  // completes this Future (or at once, if it is ready): no hand-off, but
  // that thread is one of flowio's, and the continuation must not block.
  template <typename F>
  auto then(Executor& executor, F continuation) -> Future<std::invoke_result_t<F, Future<T>>> {
    using U = std::invoke_result_t<F, Future<T>>;
    auto next = std::make_shared<detail::SharedState<U>>();
    std::shared_ptr<detail::SharedState<T>> state = std::move(state_);
    // Shared, so that the task is copyable (std::function) whatever F is.
    auto function = std::make_shared<F>(std::move(continuation));
    auto task = [state, next, function] {
      try {
        if constexpr (std::is_void_v<U>) {
          (*function)(Future<T>(state));
          next->set_value({});
        } else {
          next->set_value((*function)(Future<T>(state)));
        }
      } catch (...) {
        next->set_exception(std::current_exception());
      }
    };
    state->on_ready(
        [&executor, task = std::move(task)]() mutable { executor.execute(std::move(task)); });
    return Future<U>(std::move(next));
  }

 private:
  template <typename>
  friend class Promise;
  template <typename>
  friend class Future;

  explicit Future(std::shared_ptr<detail::SharedState<T>> state) : state_(std::move(state)) {}

  std::shared_ptr<detail::SharedState<T>> state_;
};

// The producer side: set_value or set_exception exactly once. A Promise
// destroyed unfulfilled (while its Future is still held) stores a
// std::logic_error("broken promise"), so no waiter hangs.
template <typename T>
class Promise {
 public:
  Promise() : state_(std::make_shared<detail::SharedState<T>>()) {}
  Promise(Promise&&) noexcept = default;
  Promise& operator=(Promise&& other) noexcept {
    if (this != &other) {
      break_if_unfulfilled();
      state_ = std::move(other.state_);
      fulfilled_ = other.fulfilled_;
    }
    return *this;
  }
  Promise(const Promise&) = delete;
  Promise& operator=(const Promise&) = delete;
  ~Promise() { break_if_unfulfilled(); }

  // The Future of this promise; call once.
  Future<T> get_future() { return Future<T>(state_); }

  template <typename U = T>
  requires(!std::is_void_v<U>) void set_value(U value) {
    fulfilled_ = true;
    state_->set_value(std::move(value));
  }

  template <typename U = T>
  requires std::is_void_v<U>
  void set_value() {
    fulfilled_ = true;
    state_->set_value({});
  }

  void set_exception(std::exception_ptr error) {
    fulfilled_ = true;
    state_->set_exception(std::move(error));
  }

 private:
  void break_if_unfulfilled() noexcept {
    if (state_ && !fulfilled_) {
      try {
        state_->set_exception(std::make_exception_ptr(std::logic_error("broken promise")));
      } catch (...) {
        // Already satisfied through another path: nothing to report.
      }
    }
  }

  std::shared_ptr<detail::SharedState<T>> state_;
  bool fulfilled_ = false;
};

// A Future that is ready at once with `value`.
template <typename T>
Future<T> make_ready_future(T value) {
  Promise<T> promise;
  Future<T> future = promise.get_future();
  promise.set_value(std::move(value));
  return future;
}

inline Future<void> make_ready_future() {
  Promise<void> promise;
  Future<void> future = promise.get_future();
  promise.set_value();
  return future;
}

// A Future that is ready at once with `error`.
template <typename T>
Future<T> make_exception_future(std::exception_ptr error) {
  Promise<T> promise;
  Future<T> future = promise.get_future();
  promise.set_exception(std::move(error));
  return future;
}

}  // namespace flowio
