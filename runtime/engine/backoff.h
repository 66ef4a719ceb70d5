// Backoff: how long a thread that waits for MPI requests pauses between
// tests.
//
// MPICH moves messages only inside MPI calls, so a waiting thread must keep
// testing; testing back to back burns a core that, on an oversubscribed
// node, the awaited process may need. The pause grows in proportion to the
// time waited so far (an eighth of it, capped): a step that completes
// within microseconds is seen at once, and a wait for a peer that computes
// for a long time costs a test every half millisecond (well under 1% of a
// core) while adding at most an eighth to the wait.
#pragma once

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

namespace flowio::runtime {

class Backoff {
 public:
  // Waits shorter than this test back to back.
  static constexpr std::int64_t kSpinNanoseconds = 20'000;
  static constexpr std::int64_t kLongestPauseNanoseconds = 500'000;

  // The pause before the next test, `waited_ns` after the wait began or
  // the last sign of progress; 0 means test again at once.
  static std::int64_t pause_ns(std::int64_t waited_ns) {
    if (waited_ns < kSpinNanoseconds) return 0;
    return std::min(waited_ns / 8, kLongestPauseNanoseconds);
  }

  // Pauses for about `nanoseconds`. Linux lets a sleep overrun by the
  // thread's timer slack (50 us by default), so a short pause is a yield
  // instead: it gives the core to a process that can use it (an
  // oversubscribed node) and otherwise returns at once, where a nanosleep
  // of 3 us would idle for 50 (a 2-rank read of 512 bytes took 200 us for
  // MPICH's 14, pausing so).
  static void pause(std::int64_t nanoseconds) {
    if (nanoseconds < kShortestSleepNanoseconds) {
      sched_yield();
      return;
    }
    timespec pause{nanoseconds / 1'000'000'000, nanoseconds % 1'000'000'000};
    ::nanosleep(&pause, nullptr);
  }

 private:
  static constexpr std::int64_t kShortestSleepNanoseconds = 50'000;
};

}  // namespace flowio::runtime
