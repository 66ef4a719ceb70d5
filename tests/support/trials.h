// trials(n): how many random trials a model-based test makes: n, or a
// fifth of n under the sanitizers (FLOWIO_SANITIZER, set by --config=asan),
// where every trial costs about ten times more; the plain run makes them
// all.
#pragma once

#include <cstdlib>

namespace flowio::testing {

inline int trials(int plain) {
  return std::getenv("FLOWIO_SANITIZER") != nullptr ? plain / 5 : plain;
}

}  // namespace flowio::testing
