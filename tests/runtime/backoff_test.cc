// The back-off of waiting threads: none at first, then growing with the
// wait, capped.
#include "runtime/engine/backoff.h"

#include <doctest/doctest.h>

using flowio::runtime::Backoff;

// Short waits test back to back; longer ones pause an eighth of the wait,
// never more than the cap.
TEST_CASE("Runtime.Backoff.ProportionalAndCapped") {
  CHECK(Backoff::pause_ns(0) == 0);
  CHECK(Backoff::pause_ns(Backoff::kSpinNanoseconds - 1) == 0);
  CHECK(Backoff::pause_ns(80'000) == 10'000);
  CHECK(Backoff::pause_ns(800'000) == 100'000);
  CHECK(Backoff::pause_ns(1'000'000'000) == Backoff::kLongestPauseNanoseconds);
}
