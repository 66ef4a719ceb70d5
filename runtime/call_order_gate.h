// CallOrderGate: lets the operations of one file through a step in the
// order they were called (by sequence number), whatever the order in which
// they reach it. The plan cache is consulted and filled at such a step, so
// that every process sees the same cache for the same call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace flowio::runtime {

// Thread safety: arrive() may be called from any thread.
class CallOrderGate {
 public:
  // Operation `sequence` reached the step: runs `pass` for it, and for
  // every waiting successor in turn, as soon as every earlier operation
  // has passed; possibly on the calling thread of a predecessor's
  // arrive(). `pass` must not call arrive().
  void arrive(std::uint64_t sequence, std::function<void()> pass);
  // Operation `sequence` reached the step with nothing to do there (its
  // gather was the whole protocol): it takes its turn without waiting.
  void pass_through(std::uint64_t sequence);

 private:
  std::mutex mutex_;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, std::function<void()>> waiting_;
  bool passing_ = false;  // a thread is running passes
};

}  // namespace flowio::runtime
