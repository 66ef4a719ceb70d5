// A sieving aggregator never loses another process's write of a hole in
// its window (MPI: concurrent writes of different bytes both land). Two
// ranks; rank 0 aggregates one window that holds both ranks' collective
// data and, between them, a hole that rank 1 writes independently. Rank 0's
// write of the window (after its read of the hole) is stalled by fault
// injection so that rank 1's independent write falls between the two:
//   - written while rank 1's collective write is pending: it waits for the
//     aggregator's sieve lock;
//   - started before rank 1's collective write and still running: the
//     collective write waits for it before it joins.
// Without either, the aggregator writes the hole back as it read it, and
// rank 1's bytes are lost. Each case also checks that the window was
// sieved, so that it cannot pass by going another way.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_image.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::FaultScope;

constexpr std::int64_t kEdge = 4096;  // each rank's collective bytes

using flowio::testing::world_rank;

// One aggregator whose single window sieves, through the backend (no
// mapping), with collective buffering forced.
const flowio::Hints& sieving_hints() {
  static const flowio::Hints hints = {{"romio_cb_write", "enable"},
                                      {"romio_ds_write", "enable"},
                                      {"flowio_ds_mapping", "disable"},
                                      {"cb_nodes", "1"},
                                      {"cb_buffer_size", "16777216"}};
  return hints;
}

// Rank 0's collective bytes 'a' at [0, kEdge), rank 1's independent 'h'
// at [kEdge, kEdge + hole), rank 1's collective 'c' after them.
void check_image(const std::string& path, std::int64_t hole) {
  const std::vector<char> image = flowio::testing::file_image_on_rank0(path);
  if (world_rank() != 0) return;
  REQUIRE(static_cast<std::int64_t>(image.size()) == 2 * kEdge + hole);
  std::int64_t lost = 0;
  for (std::int64_t i = kEdge; i < kEdge + hole; ++i) lost += image[i] != 'h' ? 1 : 0;
  CHECK_MESSAGE(lost == 0, lost << " bytes of the independent write were lost");
  CHECK(image[0] == 'a');
  CHECK(image[kEdge - 1] == 'a');
  CHECK(image[kEdge + hole] == 'c');
  CHECK(image.back() == 'c');
}

// Rank 0, the aggregator, sieved its window.
void check_sieved(const flowio::File& file) {
  if (world_rank() != 0) return;
  const std::vector<flowio::OperationStatistics> statistics = file.statistics();
  REQUIRE_FALSE(statistics.empty());
  CHECK(statistics.back().method == "sieve");
}

// After the race: the window was sieved, and once closed the file holds
// every write (check_image); then it goes.
void check_and_remove(flowio::File& file, const std::string& path, std::int64_t hole) {
  check_sieved(file);
  file.close();
  check_image(path, hole);
  if (world_rank() == 0) ::unlink(path.c_str());
}

// Rank 1 starts an independent write into the hole between the ranks'
// collective bytes, large enough to run on the I/O thread rather than at
// the call, and it lands 400 ms late; then both ranks write collectively
// (`blocking`: write_at_all, else iwrite_at_all), and rank 0's window write
// waits 800 ms after its read. The collective write must wait for the
// independent write that is still running before it joins.
void independent_write_running_when_collective_starts(const std::string& name, bool blocking) {
  const std::int64_t hole = 256 * 1024;
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, name);
  FaultScope stall(
      "on=write,rank=1,nth=1,fault=stall,ms=400;on=write,rank=0,nth=1,fault=stall,ms=800");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, sieving_hints());
  const std::vector<char> independent(hole, 'h');
  flowio::Future<std::size_t> running;
  if (world_rank() == 1) running = file.iwrite_at(kEdge, independent.data(), hole, MPI_BYTE);
  const std::vector<char> collective(kEdge, world_rank() == 0 ? 'a' : 'c');
  const MPI_Offset at = world_rank() == 0 ? 0 : kEdge + hole;
  if (blocking) {
    CHECK(file.write_at_all(at, collective.data(), kEdge, MPI_BYTE) ==
          static_cast<std::size_t>(kEdge));
    if (world_rank() == 1) CHECK(running.get() == static_cast<std::size_t>(hole));
  } else {
    flowio::Future<std::size_t> pending =
        file.iwrite_at_all(at, collective.data(), kEdge, MPI_BYTE);
    if (world_rank() == 1) CHECK(running.get() == static_cast<std::size_t>(hole));
    CHECK(pending.get() == static_cast<std::size_t>(kEdge));
  }
  check_and_remove(file, path, hole);
}

}  // namespace

// An independent write into a window that a pending collective write has
// read but not yet written back is not lost to the sieve.
TEST_CASE("Api.SieveRace.IndependentWriteWhileACollectiveWriteIsPending") {
  const std::int64_t hole = 8192;
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "sieve-race-pending");
  // Rank 0's first write is the window's: it waits 800 ms after the read.
  FaultScope stall("on=write,rank=0,nth=1,fault=stall,ms=800");
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly, sieving_hints());
  const std::vector<char> collective(kEdge, world_rank() == 0 ? 'a' : 'c');
  const MPI_Offset at = world_rank() == 0 ? 0 : kEdge + hole;
  flowio::Future<std::size_t> pending = file.iwrite_at_all(at, collective.data(), kEdge, MPI_BYTE);
  if (world_rank() == 1) {
    // By now rank 0 has this rank's data and has read the window.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::vector<char> independent(hole, 'h');
    CHECK(file.write_at(kEdge, independent.data(), hole, MPI_BYTE) ==
          static_cast<std::size_t>(hole));
  }
  CHECK(pending.get() == static_cast<std::size_t>(kEdge));
  check_and_remove(file, path, hole);
}

// The collective write waits for an independent write still running when
// it starts.
TEST_CASE("Api.SieveRace.IndependentWriteRunningWhenACollectiveWriteStarts") {
  independent_write_running_when_collective_starts("sieve-race-running", false);
}

// The same with a blocking collective write.
TEST_CASE("Api.SieveRace.IndependentWriteRunningWhenABlockingCollectiveWriteStarts") {
  independent_write_running_when_collective_starts("sieve-race-running-blocking", true);
}
