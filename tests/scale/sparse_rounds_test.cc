// The Alltoallw exchange (hint flowio_exchange=alltoallw) of calls whose
// data is a few bytes at each end of a huge extent, with windows of
// 4 KiB: every process's view across a gap past 2^32, and processes far
// apart (one near the file's start, the others past 2^40). Rounds used to
// be one per window of the whole extent, data or not: a million rounds
// planned and posted for the first call (hundreds of MiB per process and
// minutes), 2^28 for the second (the job killed for memory). Now rounds
// come only where some process has data: the peak resident set grows by
// a few MiB at most, and the bytes land where the view says, read back
// by the same exchange and checked against the file itself (pread).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/peak_memory.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::peak_growth_mib;
using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr std::int64_t kTile = 64;  // each rank's bytes per copy of the filetype
constexpr std::int64_t kGapExtent = (std::int64_t{1} << 32) + 4096;
constexpr std::int64_t kFar = std::int64_t{1} << 40;
constexpr double kAllowedMiB = 32;

const flowio::Hints kHints = {{"flowio_exchange", "alltoallw"},
                              {"cb_buffer_size", "4096"},
                              {"romio_cb_write", "enable"},
                              {"romio_cb_read", "enable"}};

char byte_of(int rank, std::int64_t i) { return static_cast<char>(rank * 37 + i * 11 + 1); }

std::vector<char> data_of(int rank, std::int64_t bytes) {
  std::vector<char> data(static_cast<std::size_t>(bytes));
  for (std::int64_t i = 0; i < bytes; ++i) data[static_cast<std::size_t>(i)] = byte_of(rank, i);
  return data;
}

// Rank 0 reads the closed file where each rank's bytes should be: rank r's
// i-th byte at at(r, i). Every rank learns the count of wrong bytes.
std::int64_t wrong_in_file(const std::string& path, std::int64_t bytes_per_rank,
                           const std::function<std::int64_t(int, std::int64_t)>& at) {
  std::int64_t wrong = 0;
  if (world_rank() == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    for (int r = 0; r < world_size(); ++r) {
      for (std::int64_t i = 0; i < bytes_per_rank; ++i) {
        char found = 0;
        if (::pread(fd, &found, 1, at(r, i)) != 1 || found != byte_of(r, i)) ++wrong;
      }
    }
    ::close(fd);
  }
  MPI_Bcast(&wrong, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  return wrong;
}

}  // namespace

TEST_CASE("Scale.SparseRounds.ViewAcrossAGapPast2To32") {
  const int rank = world_rank(), ranks = world_size();
  MPI_Datatype block, filetype;
  MPI_Type_contiguous(kTile, MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, kGapExtent, &filetype);
  MPI_Type_free(&block);
  MPI_Type_commit(&filetype);
  const std::string path = flowio::testing::fresh_path("sparse_rounds_gap");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, kHints);
  file.set_view(rank * kTile, MPI_BYTE, filetype);
  // Two copies of the filetype: kTile bytes at the start, kTile past 2^32.
  constexpr std::int64_t kBytes = 2 * kTile;
  std::vector<char> data = data_of(rank, kBytes);
  const double write_growth = peak_growth_mib(
      [&] { CHECK(file.write_at_all(0, data.data(), kBytes, MPI_BYTE) == kBytes); });
  MESSAGE("peak growth writing across the gap: " << write_growth << " MiB");
  CHECK(write_growth <= kAllowedMiB);
  std::vector<char> back(static_cast<std::size_t>(kBytes), 0);
  const double read_growth =
      peak_growth_mib([&] { CHECK(file.read_at_all(0, back.data(), kBytes, MPI_BYTE) == kBytes); });
  CHECK(read_growth <= kAllowedMiB);
  CHECK(back == data);
  CHECK(file.statistics().back().iterations <= 2 * ranks + 2);
  file.close();
  MPI_Type_free(&filetype);
  const auto at = [](int r, std::int64_t i) {
    return r * kTile + (i / kTile) * kGapExtent + i % kTile;
  };
  CHECK(wrong_in_file(path, kBytes, at) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) ::unlink(path.c_str());
}

TEST_CASE("Scale.SparseRounds.ProcessesPast2To40Apart") {
  const int rank = world_rank();
  const std::string path = flowio::testing::fresh_path("sparse_rounds_far");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, kHints);
  const auto at = [](int r, std::int64_t i) { return (r == 0 ? 0 : kFar) + r * kTile + i; };
  std::vector<char> data = data_of(rank, kTile);
  const double write_growth = peak_growth_mib(
      [&] { CHECK(file.write_at_all(at(rank, 0), data.data(), kTile, MPI_BYTE) == kTile); });
  MESSAGE("peak growth writing 2^40 apart: " << write_growth << " MiB");
  CHECK(write_growth <= kAllowedMiB);
  std::vector<char> back(static_cast<std::size_t>(kTile), 0);
  CHECK(file.read_at_all(at(rank, 0), back.data(), kTile, MPI_BYTE) == kTile);
  CHECK(back == data);
  file.close();
  CHECK(wrong_in_file(path, kTile, at) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) ::unlink(path.c_str());
}
