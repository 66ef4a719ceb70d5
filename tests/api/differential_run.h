// What the two differential tests share: the knobs they read from the
// environment, FLOWIO_DIFF_CASES (a fifth of it, at least 20, under the
// sanitizers, where every case costs about ten times more),
// FLOWIO_DIFF_FIRST (the first case index, to replay one), FLOWIO_DIFF_SEED
// (case i uses seed + i), FLOWIO_DIFF_REPEAT (run each case this many times
// through flowio, once through MPICH, comparing every run: a failure that
// needs a process's history shows in one process), FLOWIO_DIFF_VERBOSE (print every case and the
// seconds each side took), FLOWIO_DIFF_KEEP_DIR (keep flowio's outcome of
// every failing case there) and FLOWIO_DIFF_EXPECT_DIR (flowio's outcome of
// every case must also equal the one kept there: kept_outcome.h), and the
// loop that draws, runs and compares the cases.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>

#include "tests/api/differential_case.h"

namespace flowio::testing {

struct DifferentialRun {
  long cases;
  long first;
  long seed;
  long repeat;  // flowio runs of each case
  bool verbose;
  std::string keep_dir;    // empty: keep nothing
  std::string expect_dir;  // empty: expect nothing kept
};

inline std::string environment_text(const char* name) {
  const char* text = std::getenv(name);
  return text == nullptr ? std::string() : std::string(text);
}

inline long environment_number(const char* name, long fallback) {
  const char* text = std::getenv(name);
  return text == nullptr ? fallback : std::strtol(text, nullptr, 10);
}

inline DifferentialRun differential_run(long default_cases, long default_seed) {
  DifferentialRun run{environment_number("FLOWIO_DIFF_CASES", default_cases),
                      environment_number("FLOWIO_DIFF_FIRST", 0),
                      environment_number("FLOWIO_DIFF_SEED", default_seed),
                      std::max(environment_number("FLOWIO_DIFF_REPEAT", 1), 1L),
                      std::getenv("FLOWIO_DIFF_VERBOSE") != nullptr,
                      environment_text("FLOWIO_DIFF_KEEP_DIR"),
                      environment_text("FLOWIO_DIFF_EXPECT_DIR")};
  if (std::getenv("FLOWIO_SANITIZER") != nullptr) run.cases = std::max(run.cases / 5, 20L);
  return run;
}

// Draws cases run.first to run.first + run.cases - 1 of `shape` (case i
// from seed run.seed + i), runs each through flowio on the scratch file
// `name`_flowio and through MPICH's MPI-IO on `name`_mpich, and compares
// them (compare_outcomes: doctest checks, and a replay command for a
// failing case). Rank 0 ends with "`label` cases: N from seed S (first F),
// failed: K" (with run.repeat > 1: "failed: K runs of N * repeat").
// Collective over MPI_COMM_WORLD.
void run_differential_cases(const DifferentialRun& run, const CaseShape& shape,
                            const std::string& name, const std::string& label);

}  // namespace flowio::testing
