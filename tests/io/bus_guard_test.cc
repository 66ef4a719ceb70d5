// The SIGBUS guard around copies through file mappings: a fault inside a
// guard comes back as false (on any thread, as often as it happens, and the
// thread goes on working); outside any guard SIGBUS still takes its default
// action.
#include "io/bus_guard.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

constexpr std::size_t kLength = 2 * 4096;

// A shared mapping of a file that has been truncated to nothing behind it:
// touching any of its pages raises SIGBUS.
class VanishedMapping {
 public:
  explicit VanishedMapping(const std::string& name) : file_(name) {
    REQUIRE(::ftruncate(file_.fd(), kLength) == 0);
    void* address = ::mmap(nullptr, kLength, PROT_READ | PROT_WRITE, MAP_SHARED, file_.fd(), 0);
    REQUIRE(address != MAP_FAILED);
    base_ = static_cast<char*>(address);
    REQUIRE(::ftruncate(file_.fd(), 0) == 0);
  }
  ~VanishedMapping() { ::munmap(base_, kLength); }
  VanishedMapping(const VanishedMapping&) = delete;
  VanishedMapping& operator=(const VanishedMapping&) = delete;

  char* base() const { return base_; }

 private:
  ScratchFile file_;
  char* base_ = nullptr;
};

struct CopyJob {
  char* to;
  const char* from;
  std::size_t bytes;
};

void run_copy(void* context) {
  const CopyJob& job = *static_cast<const CopyJob*>(context);
  std::memcpy(job.to, job.from, job.bytes);
}

// Reads from the vanished mapping (false) and copies between ordinary
// buffers (true), three times each.
void check_guard_on_this_thread(const VanishedMapping& mapping) {
  std::vector<char> memory(kLength, 'a'), other(kLength, 'b');
  for (int round = 0; round < 3; ++round) {
    CopyJob faulting{memory.data(), mapping.base(), kLength};
    CHECK_FALSE(copy_catching_bus_errors(run_copy, &faulting));
    CopyJob fine{memory.data(), other.data(), kLength};
    CHECK(copy_catching_bus_errors(run_copy, &fine));
    CHECK(memory == other);
    CopyJob storing{mapping.base(), other.data(), kLength};
    CHECK_FALSE(copy_catching_bus_errors(run_copy, &storing));
  }
}

}  // namespace

TEST_CASE("Io.BusGuard.FaultInsideAGuardReturnsFalse") {
  const VanishedMapping mapping("bus-guard-main");
  check_guard_on_this_thread(mapping);
}

TEST_CASE("Io.BusGuard.EveryThreadHasItsOwnGuard") {
  const VanishedMapping mapping("bus-guard-threads");
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&mapping] { check_guard_on_this_thread(mapping); });
  }
  for (std::thread& thread : threads) thread.join();
}

// A child process touches the vanished mapping outside any guard, after a
// guard has installed the handler: the handler that was there before acts,
// and the child does not survive. That is the default action (death by
// SIGBUS), or under the sanitizers AddressSanitizer's report and exit.
TEST_CASE("Io.BusGuard.FaultOutsideAGuardKeepsThePreviousAction") {
  const VanishedMapping mapping("bus-guard-default");
  std::vector<char> memory(kLength);
  CopyJob fine{memory.data(), memory.data() + 1, 1};
  REQUIRE(copy_catching_bus_errors(run_copy, &fine));
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    volatile char sink = mapping.base()[0];
    (void)sink;
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  if (std::getenv("FLOWIO_SANITIZER") == nullptr) {
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGBUS);
  }
}

}  // namespace flowio::io::testing
