// Compiled plans through the File API, on 1, 2 and 4 ranks: a collective
// call repeated with the same access on every rank reruns the plan of the
// first (statistics say plan_reused), moving the right bytes; any change of
// access, view, hints or file size compiles anew; flowio_plan_cache=0 never
// reuses.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

constexpr int kBlock = 64;    // bytes of each rank's block
constexpr int kBlocks = 200;  // blocks per call
constexpr int kBytes = kBlock * kBlocks;

using namespace flowio::testing;

std::vector<char> data(int round) {
  std::vector<char> bytes(kBytes);
  for (int i = 0; i < kBytes; ++i) {
    bytes[i] = static_cast<char>((i * 7 + world_rank() * 31 + round * 13) % 251);
  }
  return bytes;
}

// Two-phase I/O always (so that there is a plan), with small windows.
const flowio::Hints kTwoPhase = {
    {"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}, {"cb_buffer_size", "1024"}};

struct Fixture {
  std::string path;
  const InterleavedView view{kBlock};  // each rank sees every world_size()-th block
  flowio::File file;

  explicit Fixture(const flowio::Hints& hints) {
    path = flowio::testing::scratch_path(MPI_COMM_WORLD, "plan_cache.dat");
    if (world_rank() == 0) std::remove(path.c_str());
    MPI_Barrier(MPI_COMM_WORLD);
    file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
    view.apply(file);
  }
  ~Fixture() {
    if (file.is_open()) file.close();
  }

  bool write(MPI_Offset offset, int round) {
    const std::vector<char> bytes = data(round);
    CHECK(file.write_at_all(offset, bytes.data(), kBytes, MPI_BYTE) == kBytes);
    return file.statistics().back().plan_reused;
  }
  bool read_and_check(MPI_Offset offset, int round) {
    std::vector<char> bytes(kBytes);
    CHECK(file.read_at_all(offset, bytes.data(), kBytes, MPI_BYTE) == kBytes);
    CHECK(bytes == data(round));
    return file.statistics().back().plan_reused;
  }
};

}  // namespace

// The second identical call reruns the plan, writes and reads included,
// and moves the new buffer's bytes.
TEST_CASE("Api.PlanCache.RepeatedCallReusesPlan") {
  Fixture f(kTwoPhase);
  CHECK_FALSE(f.write(0, 1));
  CHECK(f.write(0, 2));
  CHECK(f.write(0, 3));
  CHECK_FALSE(f.read_and_check(0, 3));  // the first read: another direction
  CHECK(f.read_and_check(0, 3));
}

// Another offset is another plan; both are kept and reused.
TEST_CASE("Api.PlanCache.OtherAccessOtherPlan") {
  Fixture f(kTwoPhase);
  CHECK_FALSE(f.write(0, 1));
  CHECK_FALSE(f.write(kBytes, 2));
  CHECK(f.write(0, 3));
  CHECK(f.write(kBytes, 4));
  CHECK(f.read_and_check(0, 3) == false);
  CHECK(f.read_and_check(kBytes, 4) == false);
  CHECK(f.read_and_check(0, 3));
}

// set_view, set_hints and set_size drop the kept plans.
TEST_CASE("Api.PlanCache.ViewHintsAndSizeInvalidate") {
  Fixture f(kTwoPhase);
  CHECK_FALSE(f.write(0, 1));
  CHECK(f.write(0, 2));
  f.view.apply(f.file);
  CHECK_FALSE(f.write(0, 3));
  CHECK(f.write(0, 4));
  f.file.set_hints({{"cb_buffer_size", "2048"}});
  CHECK_FALSE(f.write(0, 5));
  CHECK(f.write(0, 6));
  f.file.set_size(static_cast<MPI_Offset>(kBytes) * world_size() * 2);
  CHECK_FALSE(f.write(0, 7));
  CHECK(f.write(0, 8));
  CHECK(f.read_and_check(0, 8) == false);
}

// flowio_plan_cache=0 compiles every call.
TEST_CASE("Api.PlanCache.DisabledByHint") {
  flowio::Hints hints = kTwoPhase;
  hints["flowio_plan_cache"] = "0";
  Fixture f(hints);
  CHECK_FALSE(f.write(0, 1));
  CHECK_FALSE(f.write(0, 2));
  CHECK_FALSE(f.read_and_check(0, 2));
  CHECK_FALSE(f.read_and_check(0, 2));
}

// Identical nonblocking calls in flight together: the later ones wait for
// the earlier (same bytes), rerun its plan, and the last data wins.
TEST_CASE("Api.PlanCache.IdenticalCallsInFlight") {
  Fixture f(kTwoPhase);
  const std::vector<char> first = data(1), second = data(2), third = data(3);
  flowio::Future<std::size_t> a = f.file.iwrite_at_all(0, first.data(), kBytes, MPI_BYTE);
  flowio::Future<std::size_t> b = f.file.iwrite_at_all(0, second.data(), kBytes, MPI_BYTE);
  flowio::Future<std::size_t> c = f.file.iwrite_at_all(0, third.data(), kBytes, MPI_BYTE);
  CHECK(c.get() == kBytes);
  CHECK(a.get() == kBytes);
  CHECK(b.get() == kBytes);
  const std::vector<flowio::OperationStatistics> statistics = f.file.statistics();
  REQUIRE(statistics.size() == 3);
  CHECK_FALSE(statistics[0].plan_reused);
  CHECK(statistics[1].plan_reused);
  CHECK(statistics[2].plan_reused);
  CHECK(f.read_and_check(0, 3) == false);
}
