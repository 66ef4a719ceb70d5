// What every rank saw from one operation, for the fault, bad-input and
// durability tests: each rank runs the operation (with a deadline), the
// outcomes are gathered to every rank, and rank 0 prints one line per case
// for the closing table:
//   flowio-outcome: <case> | <fault> | rank 0: ok 4096 B 0.001 s; rank 1: no_space (errno 28) 0.002
//   s
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "flowio/future.h"
#include "tests/support/future_deadline.h"

namespace flowio::testing {

struct Outcome {
  // -1: success; -2: an exception that is not a flowio::Error; otherwise an
  // ErrorCode.
  int code = -1;
  int system_errno = 0;
  double seconds = 0;
  long long moved = 0;  // bytes, on success

  bool ok() const { return code == -1; }
  bool failed_with(ErrorCode expected) const { return code == static_cast<int>(expected); }
};

inline std::string describe(const Outcome& outcome) {
  char timing[32];
  std::snprintf(timing, sizeof timing, " %.3f s", outcome.seconds);
  if (outcome.ok()) return "ok " + std::to_string(outcome.moved) + " B" + timing;
  if (outcome.code == -2) return std::string("not a flowio::Error") + timing;
  std::string text = to_string(static_cast<ErrorCode>(outcome.code));
  if (outcome.system_errno != 0) text += " (errno " + std::to_string(outcome.system_errno) + ")";
  return text + timing;
}

// Runs `call` (which returns the bytes moved, or throws) and records what
// it did and how long it took. Never lets an exception escape.
inline Outcome observe(const std::function<std::size_t()>& call) {
  Outcome outcome;
  const auto begin = std::chrono::steady_clock::now();
  try {
    outcome.moved = static_cast<long long>(call());
  } catch (const Error& error) {
    outcome.code = static_cast<int>(error.code());
    outcome.system_errno = error.system_errno();
  } catch (...) {
    outcome.code = -2;
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return outcome;
}

// The same for a nonblocking call: `start` returns the Future, which is
// waited for up to operation_deadline() (the job fails, naming
// `operation`, past it). A throw from `start` itself is the outcome too.
inline Outcome observe_future(const std::string& operation,
                              const std::function<Future<std::size_t>()>& start) {
  return observe([&] {
    Future<std::size_t> pending = start();
    return get_within(pending, operation);
  });
}

// Collective over `comm`: every rank's outcome, by rank.
inline std::vector<Outcome> gather_outcomes(const Outcome& mine, MPI_Comm comm = MPI_COMM_WORLD) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  std::vector<Outcome> all(static_cast<std::size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);
  return all;
}

inline std::string describe(const std::vector<Outcome>& outcomes) {
  std::string text;
  for (std::size_t rank = 0; rank < outcomes.size(); ++rank) {
    if (rank > 0) text += "; ";
    text += "rank " + std::to_string(rank) + ": " + describe(outcomes[rank]);
  }
  return text;
}

// The slowest rank's time.
inline double slowest(const std::vector<Outcome>& outcomes) {
  double seconds = 0;
  for (const Outcome& outcome : outcomes) seconds = std::max(seconds, outcome.seconds);
  return seconds;
}

// Rank 0 prints the closing-table line of one case.
inline void print_outcomes(const std::string& test_case, const std::string& fault,
                           const std::vector<Outcome>& outcomes) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  std::printf("flowio-outcome: %s | %s | %s\n", test_case.c_str(), fault.c_str(),
              describe(outcomes).c_str());
  std::fflush(stdout);
}

}  // namespace flowio::testing
