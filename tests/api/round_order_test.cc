// The Alltoallw rounds of collective reads keep one order on every rank
// while their window reads wait on the I/O thread: aggregators with
// different numbers of windows (realms aligned to 1024 bytes, 512-byte
// windows) have rounds with a window to read and rounds with nothing, and
// a stalled first read (fault injection) lets a later round with nothing
// to read be ready first. If that round posted its Ialltoallw before the
// stalled one, ranks would pair different rounds and hang or mix data (as
// they once did: the round pipeline's serial stages ran their bodies in
// order but passed items on in the order their waits ended).
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/future_deadline.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

constexpr int kBlock = 128;              // bytes of each rank's blocks, interleaved
constexpr std::int64_t kPerRank = 1536;  // bytes each rank reads
constexpr std::int64_t kOperations = 3;  // reads in flight at once, each its own part

}  // namespace

TEST_CASE("Api.RoundOrder.StalledWindowReadsKeepRoundsInOrder") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "round_order");
  const std::int64_t file_bytes = kOperations * kPerRank * world_size();
  write_pattern_file(path, file_bytes);
  std::string aggregators;
  for (int r = 0; r < world_size(); ++r) aggregators += (r ? "," : "") + std::to_string(r);
  // Each rank's first window read (and so its first round that has one)
  // waits 300 ms.
  const flowio::testing::FaultScope stall("on=read,nth=1,fault=stall,ms=300");
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly,
                                         {{"flowio_exchange", "alltoallw"},
                                          {"flowio_aggregators", aggregators},
                                          {"cb_buffer_size", "512"},
                                          {"flowio_realm_policy", "aligned"},
                                          {"romio_cb_fr_alignment", "1024"},
                                          {"flowio_ds_mapping", "disable"},
                                          {"romio_cb_read", "enable"}});
  const InterleavedView view(kBlock);  // each rank sees every world_size()-th block
  view.apply(file);
  std::vector<std::vector<char>> got(kOperations, std::vector<char>(kPerRank, '#'));
  std::vector<flowio::Future<std::size_t>> reads;
  for (std::int64_t k = 0; k < kOperations; ++k) {
    reads.push_back(file.iread_at_all(k * kPerRank, got[k].data(), kPerRank, MPI_CHAR));
  }
  for (std::int64_t k = 0; k < kOperations; ++k) {
    CHECK(flowio::testing::get_within(reads[k], "iread_at_all #" + std::to_string(k)) ==
          static_cast<std::size_t>(kPerRank));
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < kPerRank; ++i) {
      wrong += got[k][static_cast<std::size_t>(i)] != pattern(view.file_offset(k * kPerRank + i));
    }
    CHECK(wrong == 0);
  }
  file.close();
}
