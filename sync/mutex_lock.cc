#include "sync/mutex_lock.h"

#include <condition_variable>
#include <deque>
#include <mutex>

#include "flowio/error.h"

namespace flowio::sync {

// Shared with the callbacks the protocol runs on the progress thread and
// with the leases, so that neither outlives what it refers to.
struct MutexLock::State : std::enable_shared_from_this<State> {
  enum class Phase { idle, acquiring, held, releasing };

  std::unique_ptr<MutexProtocol> protocol;
  std::mutex mutex;
  std::condition_variable settled;  // phase became idle
  Phase phase = Phase::idle;
  std::deque<Promise<Lease>> waiting;
  std::exception_ptr broken;  // the first failure; every later acquire gets it

  void start_acquire() {
    protocol->acquire([self = shared_from_this()](std::exception_ptr failure) {
      self->granted(std::move(failure));
    });
  }

  void granted(std::exception_ptr failure) {
    std::unique_lock lock(mutex);
    if (failure) {
      fail_all(lock, failure);
      return;
    }
    phase = Phase::held;
    Promise<Lease> promise = std::move(waiting.front());
    waiting.pop_front();
    lock.unlock();
    promise.set_value(Lease([self = shared_from_this()] { self->release(); }));
  }

  void release() {
    {
      std::lock_guard lock(mutex);
      phase = Phase::releasing;
    }
    protocol->release([self = shared_from_this()](std::exception_ptr failure) {
      self->released(std::move(failure));
    });
  }

  void released(std::exception_ptr failure) {
    std::unique_lock lock(mutex);
    if (failure) {
      fail_all(lock, failure);
      return;
    }
    if (waiting.empty()) {
      phase = Phase::idle;
      settled.notify_all();
      return;
    }
    phase = Phase::acquiring;
    lock.unlock();
    start_acquire();
  }

  // The protocol's state is unknown after a failure: nobody may use the
  // lock any more, and nobody waits for it in vain.
  void fail_all(std::unique_lock<std::mutex>& lock, std::exception_ptr failure) {
    broken = failure;
    phase = Phase::idle;
    std::deque<Promise<Lease>> failed = std::move(waiting);
    settled.notify_all();
    lock.unlock();
    for (Promise<Lease>& promise : failed) promise.set_exception(failure);
  }
};

MutexLock::MutexLock(std::unique_ptr<MutexProtocol> protocol) : state_(std::make_shared<State>()) {
  state_->protocol = std::move(protocol);
}

MutexLock::~MutexLock() = default;

Future<Lease> MutexLock::acquire(ByteRange, LockMode) {
  std::unique_lock lock(state_->mutex);
  if (state_->broken) return make_exception_future<Lease>(state_->broken);
  state_->waiting.emplace_back();
  Future<Lease> future = state_->waiting.back().get_future();
  if (state_->phase != State::Phase::idle) return future;
  state_->phase = State::Phase::acquiring;
  lock.unlock();
  state_->start_acquire();
  return future;
}

void MutexLock::close() {
  {
    std::unique_lock lock(state_->mutex);
    if (state_->phase == State::Phase::held || state_->phase == State::Phase::acquiring ||
        !state_->waiting.empty()) {
      throw UsageError(ErrorCode::invalid_argument,
                       "closing a lock that this process holds or waits for");
    }
    // A release in progress ends on its own.
    state_->settled.wait(lock, [this] { return state_->phase == State::Phase::idle; });
  }
  state_->protocol->close();
}

std::string MutexLock::name() const { return state_->protocol->name(); }

}  // namespace flowio::sync
