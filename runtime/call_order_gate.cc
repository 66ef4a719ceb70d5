#include "runtime/call_order_gate.h"

namespace flowio::runtime {

void CallOrderGate::arrive(std::uint64_t sequence, std::function<void()> pass) {
  std::unique_lock lock(mutex_);
  // The common case, one operation at a time, passes at once without being
  // queued; any other waits its turn.
  const bool at_once = !passing_ && sequence == next_ && waiting_.empty();
  if (!at_once) {
    waiting_.emplace(sequence, std::move(pass));
    pass = nullptr;
    // One thread at a time runs passes, in order; others leave theirs.
    if (passing_) return;
  }
  passing_ = true;
  for (;;) {
    if (!pass) {
      if (waiting_.empty() || waiting_.begin()->first != next_) break;
      pass = std::move(waiting_.begin()->second);
      waiting_.erase(waiting_.begin());
    }
    ++next_;
    lock.unlock();
    pass();
    pass = nullptr;
    lock.lock();
  }
  passing_ = false;
}

void CallOrderGate::pass_through(std::uint64_t sequence) {
  {
    std::lock_guard lock(mutex_);
    if (!passing_ && sequence == next_ && waiting_.empty()) {
      ++next_;
      return;
    }
  }
  arrive(sequence, [] {});
}

}  // namespace flowio::runtime
