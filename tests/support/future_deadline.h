// get_within: waiting for a flowio Future in a test without ever hanging.
//
// A Future that is not ready by the deadline will not be made ready by
// waiting longer in a test (a partner rank is gone, an operation is stuck),
// and calling get() on it would block until Bazel kills the job with only
// "TIMEOUT" to show. get_within fails the whole job at the deadline with a
// message naming the operation instead.
#pragma once

#include <chrono>
#include <cstdlib>
#include <string>

#include "flowio/future.h"
#include "tests/support/test_progress.h"

namespace flowio::testing {

// The time a test grants one operation: 60 s, three times that under the
// sanitizers (FLOWIO_SANITIZER set), which slow everything down.
inline std::chrono::seconds operation_deadline() {
  return std::chrono::seconds(std::getenv("FLOWIO_SANITIZER") != nullptr ? 180 : 60);
}

// Waits up to `limit` for `future`, then returns get() (rethrowing its
// error). If it is not ready by then, fails the job (fail_job) naming
// `operation`: never blocks past the limit.
template <typename T>
T get_within(Future<T>& future, std::chrono::seconds limit, const std::string& operation) {
  if (!future.wait_for(limit)) {
    fail_job(operation + " did not complete within " + std::to_string(limit.count()) + " s");
  }
  return future.get();
}

template <typename T>
T get_within(Future<T>& future, const std::string& operation) {
  return get_within(future, operation_deadline(), operation);
}

}  // namespace flowio::testing
