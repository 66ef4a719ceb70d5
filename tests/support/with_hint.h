// with_hint: a set of hints with one key set, so that a test names its
// cases as shared hints plus the one that differs.
#pragma once

#include <string>

#include "flowio/hints.h"

namespace flowio::testing {

// `hints` with `key` set to `value` (added, or replacing the value it had).
inline flowio::Hints with_hint(flowio::Hints hints, const std::string& key,
                               const std::string& value) {
  hints[key] = value;
  return hints;
}

}  // namespace flowio::testing
