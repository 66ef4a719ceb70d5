// The test-only fault-injecting backend and injection points
// (io/fault_injection.h): plans parse or are refused with a clear error,
// each fault happens on exactly the call it names, and the backend works
// normally before and after.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <new>
#include <string>

#include "flowio/error.h"
#include "io/fault_injection.h"
#include "io_test_support.h"
#include "runtime/core/injection_point.h"

namespace flowio::io::testing {
namespace {

std::unique_ptr<StorageBackend> injecting(const std::string& plan, int rank = 0) {
  return make_fault_injecting_backend(std::make_unique<PosixBackend>(), FaultPlan::parse(plan),
                                      rank);
}

// The errno of the IoError `call` throws, or 0 when it throws none.
template <class Call>
int errno_of(Call&& call) {
  try {
    call();
  } catch (const IoError& error) {
    return error.system_errno();
  }
  return 0;
}

// Restores FLOWIO_FAULT as the source of the plan when a test ends.
struct PlanScope {
  explicit PlanScope(const std::string& plan) { set_fault_plan(FaultPlan::parse(plan)); }
  ~PlanScope() { set_fault_plan(std::nullopt); }
};

}  // namespace

// Every key parses; bad plans are refused naming what is wrong.
TEST_CASE("Io.FaultInjection.PlansParseOrAreRefused") {
  const FaultPlan plan =
      FaultPlan::parse("on=write,rank=1,nth=3,times=2,fault=enospc;on=read,fault=stall,ms=5");
  REQUIRE(plan.rules.size() == 2);
  CHECK(plan.rules[0].on == "write");
  CHECK(plan.rules[0].rank == 1);
  CHECK(plan.rules[0].fault == FaultKind::enospc);
  CHECK_FALSE(plan.rules[0].hits(2));
  CHECK(plan.rules[0].hits(3));
  CHECK(plan.rules[0].hits(4));
  CHECK_FALSE(plan.rules[0].hits(5));
  CHECK(plan.rules[1].stall_ms == 5);
  CHECK_FALSE(plan.rules[1].rank.has_value());
  for (const char* bad : {"fault=eio", "on=write,fault=melt", "on=write,nth=0", "on=write,nth=x",
                          "on=write,colour=red", "on=write,rank=-1", "on=write,times"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(FaultPlan::parse(bad), UsageError);
  }
}

// The nth write fails with the errno asked for, and only that one.
TEST_CASE("Io.FaultInjection.NthWriteFails") {
  ScratchFile file("fault-nth-write");
  const auto backend = injecting("on=write,nth=2,fault=enospc");
  RequestSet set;
  set.add(0, {64});
  set.fill_with_pattern();
  CHECK(errno_of([&] { backend->write(file.fd(), set.requests()); }) == 0);
  CHECK(errno_of([&] { backend->write(file.fd(), set.requests()); }) == ENOSPC);
  CHECK(errno_of([&] { backend->write(file.fd(), set.requests()); }) == 0);
  CHECK(set.check_file(file.fd()) == "");
}

// A short write puts the first half of the first request on storage and
// then fails as a full disk does.
TEST_CASE("Io.FaultInjection.ShortWriteWritesHalfThenFails") {
  ScratchFile file("fault-short-write");
  const auto backend = injecting("on=write,fault=short");
  RequestSet set;
  set.add(0, {100, 100});
  set.fill_with_pattern();
  CHECK(errno_of([&] { backend->write(file.fd(), set.requests()); }) == ENOSPC);
  CHECK(file.descriptor().size() == 100);
}

// A short read reports the first request ending half way, as a file cut
// there would.
TEST_CASE("Io.FaultInjection.ShortReadEndsHalfWay") {
  ScratchFile file("fault-short-read");
  write_pattern_file(file.fd(), 4096);
  const auto backend = injecting("on=read,fault=short");
  RequestSet set;
  set.add(0, {1000});
  set.add(2000, {1000});
  std::vector<std::size_t> bytes_read(2, 0);
  backend->read(file.fd(), set.requests(), bytes_read);
  CHECK(bytes_read[0] == 500);
  CHECK(bytes_read[1] == 0);
}

// A stalled read waits, then delivers its data.
TEST_CASE("Io.FaultInjection.StallDelaysButDelivers") {
  ScratchFile file("fault-stall");
  write_pattern_file(file.fd(), 4096);
  const auto backend = injecting("on=read,fault=stall,ms=200");
  RequestSet set;
  set.add(0, {4096});
  std::vector<std::size_t> bytes_read(1, 0);
  const auto begin = std::chrono::steady_clock::now();
  backend->read(file.fd(), set.requests(), bytes_read);
  CHECK(std::chrono::steady_clock::now() - begin >= std::chrono::milliseconds(200));
  CHECK(bytes_read[0] == 4096);
  CHECK(set.check_read(bytes_read, 4096) == "");
}

// A rule for another rank leaves this one's backend as it was.
TEST_CASE("Io.FaultInjection.OtherRanksAreUntouched") {
  ScratchFile file("fault-other-rank");
  const auto backend = injecting("on=write,rank=3,fault=eio", 0);
  CHECK(backend->name() == std::string("posix"));
  RequestSet set;
  set.add(0, {64});
  set.fill_with_pattern();
  CHECK(errno_of([&] { backend->write(file.fd(), set.requests()); }) == 0);
}

// make_storage_backend wraps every backend while the library is linked,
// under the plan in force, and keeps the inner backend's name.
TEST_CASE("Io.FaultInjection.NewBackendsFollowThePlan") {
  const PlanScope scope("on=write,fault=eio");
  const auto backend = make_storage_backend(BackendKind::posix);
  CHECK(backend->name() == std::string("posix"));
  ScratchFile file("fault-made");
  RequestSet set;
  set.add(0, {64});
  set.fill_with_pattern();
  CHECK(errno_of([&] { backend->write(file.fd(), set.requests()); }) == EIO);
}

// An armed injection point throws what the plan says on its nth call;
// points not armed do nothing.
TEST_CASE("Io.FaultInjection.InjectionPointsThrowWhenArmed") {
  const PlanScope scope("on=test.stage,nth=2,fault=bad_alloc;on=test.other,fault=usage");
  CHECK_NOTHROW(core::injection_point("test.stage"));
  CHECK_THROWS_AS(core::injection_point("test.stage"), std::bad_alloc);
  CHECK_NOTHROW(core::injection_point("test.stage"));
  CHECK_THROWS_AS(core::injection_point("test.other"), UsageError);
  CHECK_NOTHROW(core::injection_point("test.unarmed"));
}

}  // namespace flowio::io::testing
