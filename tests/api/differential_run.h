// The knobs both differential tests read from the environment:
// FLOWIO_DIFF_CASES (a fifth of it, at least 20, under the sanitizers,
// where every case costs about ten times more), FLOWIO_DIFF_FIRST (the
// first case index, to replay one), FLOWIO_DIFF_SEED (case i uses seed + i)
// and FLOWIO_DIFF_VERBOSE (print every case).
#pragma once

#include <algorithm>
#include <cstdlib>

namespace flowio::testing {

struct DifferentialRun {
  long cases;
  long first;
  long seed;
  bool verbose;
};

inline long environment_number(const char* name, long fallback) {
  const char* text = std::getenv(name);
  return text == nullptr ? fallback : std::strtol(text, nullptr, 10);
}

inline DifferentialRun differential_run(long default_cases, long default_seed) {
  DifferentialRun run{environment_number("FLOWIO_DIFF_CASES", default_cases),
                      environment_number("FLOWIO_DIFF_FIRST", 0),
                      environment_number("FLOWIO_DIFF_SEED", default_seed),
                      std::getenv("FLOWIO_DIFF_VERBOSE") != nullptr};
  if (std::getenv("FLOWIO_SANITIZER") != nullptr) run.cases = std::max(run.cases / 5, 20L);
  return run;
}

}  // namespace flowio::testing
