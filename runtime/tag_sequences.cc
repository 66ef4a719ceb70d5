#include "runtime/tag_sequences.h"

namespace flowio::runtime {

std::uint64_t TagSequences::take() {
  const std::uint64_t sequence = next_++;
  std::atomic<bool>& slot = live_[sequence % kSequencesApart];
  // Waits without a lock: atomic wait sleeps in the kernel, and end()'s
  // notify costs a system call only when someone sleeps.
  while (slot.load(std::memory_order_acquire)) slot.wait(true, std::memory_order_acquire);
  slot.store(true, std::memory_order_relaxed);
  return sequence;
}

void TagSequences::end(std::uint64_t sequence) {
  std::atomic<bool>& slot = live_[sequence % kSequencesApart];
  slot.store(false, std::memory_order_release);
  slot.notify_all();
}

}  // namespace flowio::runtime
