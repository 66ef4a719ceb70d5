#include "tests/support/test_progress.h"

#include <doctest/doctest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

namespace flowio::testing {
namespace {

struct Progress {
  std::mutex mutex;
  std::string test_case;
  std::string operation;
  int cases_started = 0;
  int cases_skipped = 0;
  bool current_skipped = false;
};

// Never destroyed: the watchdog thread may read it while the process exits.
Progress& progress() {
  static Progress* instance = new Progress();
  return *instance;
}

int world_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return -1;
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Follows doctest's test cases; reports nothing itself.
class ProgressListener : public doctest::IReporter {
 public:
  explicit ProgressListener(const doctest::ContextOptions&) {}

  void test_case_start(const doctest::TestCaseData& data) override {
    Progress& state = progress();
    std::lock_guard lock(state.mutex);
    state.test_case = data.m_name;
    state.operation.clear();
    ++state.cases_started;
    state.current_skipped = false;
  }
  void test_case_end(const doctest::CurrentTestCaseStats&) override {
    Progress& state = progress();
    std::lock_guard lock(state.mutex);
    if (state.current_skipped) ++state.cases_skipped;
    state.test_case.clear();
  }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("flowio_progress", 1, ProgressListener);

}  // namespace

Operation::Operation(std::string what) {
  Progress& state = progress();
  std::lock_guard lock(state.mutex);
  previous_ = std::exchange(state.operation, std::move(what));
}

Operation::~Operation() {
  Progress& state = progress();
  std::lock_guard lock(state.mutex);
  state.operation = std::move(previous_);
}

std::string describe_progress() {
  Progress& state = progress();
  std::lock_guard lock(state.mutex);
  std::string text = "test case \"" + state.test_case + "\"";
  if (!state.operation.empty()) text += ", operation \"" + state.operation + "\"";
  return text;
}

void fail_job(const std::string& message) {
  const int rank = world_rank();
  std::fprintf(stderr, "flowio-test: FAILED on rank %d: %s (%s)\n", rank, message.c_str(),
               describe_progress().c_str());
  std::fflush(stderr);
  if (rank >= 0) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

namespace {

void print_skip(const std::string& part, const std::string& reason, bool whole_case) {
  Progress& state = progress();
  std::string test_case;
  {
    std::lock_guard lock(state.mutex);
    if (whole_case) state.current_skipped = true;
    test_case = state.test_case;
  }
  std::printf("flowio-test: SKIPPED \"%s\"%s: %s\n", test_case.c_str(), part.c_str(),
              reason.c_str());
  std::fflush(stdout);
}

}  // namespace

void skip(const std::string& reason) { print_skip("", reason, true); }

void skip_part(const std::string& part, const std::string& reason) {
  print_skip(" (" + part + ")", reason, false);
}

void start_watchdog() {
  long seconds = 0;
  if (const char* deadline = std::getenv("FLOWIO_TEST_DEADLINE")) {
    seconds = std::strtol(deadline, nullptr, 10);
  } else if (const char* bazel_timeout = std::getenv("TEST_TIMEOUT")) {
    seconds = std::strtol(bazel_timeout, nullptr, 10) * 90 / 100;
  }
  if (seconds <= 0) return;
  // Detached: a process that finishes in time simply exits under it.
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    fail_job("no result after " + std::to_string(seconds) +
             " s (the test deadline, set below Bazel's timeout)");
  }).detach();
}

void report_skips() {
  Progress& state = progress();
  std::lock_guard lock(state.mutex);
  if (state.cases_started > 0 && state.cases_skipped == state.cases_started) {
    std::printf("flowio-test: ALL SKIPPED\n");
    std::fflush(stdout);
  }
}

}  // namespace flowio::testing
