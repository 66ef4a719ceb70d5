// What a test process is doing, for people reading a failed or skipped run:
// the test case and the operation under way, a watchdog that ends a hung
// process with a message naming them, and skips that the suite's summary
// counts apart from passes (tools/test.sh).
//
// Linked into every doctest main (doctest_main, mpi_doctest_main), which
// start the watchdog and print the skip markers at exit.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <string>

namespace flowio::testing {

// While an Operation lives, the watchdog's message names it ("collective
// write to a full tmpfs"). Operations nest; the innermost is named.
class Operation {
 public:
  explicit Operation(std::string what);
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

 private:
  std::string previous_;
};

// The test case and operation running now, as the watchdog prints them.
std::string describe_progress();

// Ends the whole job at once with `message` (and the progress) on stderr:
// for a test that cannot go on without hanging, such as a rank whose
// collective partner will never come. Under mpiexec it aborts every rank.
[[noreturn]] void fail_job(const std::string& message);

// Marks the running test case as skipped because it cannot run on this
// machine (io_uring refused by the kernel, mounting not permitted, ...):
// prints the marker line tools/test.sh counts, `flowio-test: SKIPPED
// "<test case>": <reason>`. The caller returns from the test case after
// it. Never use it for a failure.
void skip(const std::string& reason);

// The same for one part of the running test case (a backend variant, say),
// the rest of which runs: the marker names `part`, and the test case
// still counts as run.
void skip_part(const std::string& part, const std::string& reason);

// Starts the watchdog thread: after FLOWIO_TEST_DEADLINE seconds (set by
// the mpiexec runners below Bazel's timeout), or else 90% of Bazel's
// TEST_TIMEOUT, it calls fail_job with what is running; with neither set
// there is no watchdog. Called once by the mains.
void start_watchdog();

// Called by the mains after the run: when every test case that ran was
// skipped, prints `flowio-test: ALL SKIPPED`, so the suite counts the
// test as skipped rather than passed.
void report_skips();

}  // namespace flowio::testing
