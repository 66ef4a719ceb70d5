#include "runtime/call_order_gate.h"

namespace flowio::runtime {

void CallOrderGate::arrive(std::uint64_t sequence, std::function<void()> pass) {
  std::unique_lock lock(mutex_);
  waiting_.emplace(sequence, std::move(pass));
  // One thread at a time runs passes, in order; others leave theirs.
  if (passing_) return;
  passing_ = true;
  while (!waiting_.empty() && waiting_.begin()->first == next_) {
    std::function<void()> next = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    ++next_;
    lock.unlock();
    next();
    lock.lock();
  }
  passing_ = false;
}

}  // namespace flowio::runtime
