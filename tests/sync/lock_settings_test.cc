// The hints that choose atomic mode's lock.
#include "sync/lock_settings.h"

#include <doctest/doctest.h>

#include "flowio/error.h"

using flowio::Hints;
using flowio::UsageError;
using flowio::sync::LockAlgorithm;
using flowio::sync::LockSettings;

// Without hints: the measured defaults (bench/README.md, "locks").
TEST_CASE("Sync.LockSettings.Defaults") {
  const LockSettings settings = LockSettings::from_hints({});
  CHECK(settings.algorithm == LockAlgorithm::hybrid);
  CHECK(settings.ranges);
}

// Every algorithm and both granularities are selectable, and read back.
TEST_CASE("Sync.LockSettings.FromHints") {
  for (const char* name : {"hybrid", "one_sided", "mcs", "fcntl"}) {
    const LockSettings settings =
        LockSettings::from_hints({{"flowio_lock", name}, {"flowio_lock_ranges", "disable"}});
    CHECK_FALSE(settings.ranges);
    Hints described;
    settings.describe(described);
    CHECK(described["flowio_lock"] == name);
    CHECK(described["flowio_lock_ranges"] == "disable");
  }
}

// A value flowio does not know is an error at the call, not a silent
// default.
TEST_CASE("Sync.LockSettings.BadValues") {
  CHECK_THROWS_AS(LockSettings::from_hints({{"flowio_lock", "spin"}}), UsageError);
  CHECK_THROWS_AS(LockSettings::from_hints({{"flowio_lock_ranges", "yes"}}), UsageError);
}
