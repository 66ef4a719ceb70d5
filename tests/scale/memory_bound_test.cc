// Memory stays bounded by the hints however large the call: each rank
// writes 1 GiB in one collective call, interleaved with the other ranks'
// in 4 KiB pieces (two-phase I/O), and reads it back in one call. Over
// what the process held before the call (its data included), the peak
// resident set (VmHWM, reset through /proc/self/clear_refs) may grow by
// the collective buffers in flight, two of cb_buffer_size per iteration
// (the window and its sieve staging), plus 64 MiB for metadata, threads
// and allocator slack; and every byte read back must be the one written.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
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

constexpr std::int64_t kBytesPerRank = std::int64_t{1} << 30;
constexpr std::int64_t kPiece = 4096;
constexpr std::int64_t kBufferMiB = 16;
constexpr std::int64_t kInFlight = 3;
constexpr double kAllowedMiB = 2.0 * kInFlight * kBufferMiB + 64;

std::uint64_t word_at(int rank, std::int64_t i) {
  return (static_cast<std::uint64_t>(rank) << 56) ^
         (static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15);
}

}  // namespace

TEST_CASE("Scale.MemoryBound.OneGiBPerRankWrittenAndRead") {
  const int rank = world_rank(), ranks = world_size();
  constexpr std::int64_t kWords = kBytesPerRank / 8;
  std::vector<std::uint64_t> data(static_cast<std::size_t>(kWords));
  for (std::int64_t i = 0; i < kWords; ++i) data[static_cast<std::size_t>(i)] = word_at(rank, i);
  MPI_Datatype block, tile;
  MPI_Type_contiguous(kPiece, MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, kPiece * ranks, &tile);
  MPI_Type_free(&block);
  MPI_Type_commit(&tile);
  const flowio::Hints hints = {{"cb_buffer_size", std::to_string(kBufferMiB << 20)},
                               {"flowio_buffers_in_flight", std::to_string(kInFlight)},
                               {"romio_cb_write", "enable"},
                               {"romio_cb_read", "enable"}};
  const std::string path = flowio::testing::fresh_path("memory_bound");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
  file.set_view(rank * kPiece, MPI_BYTE, tile);
  const double write_growth = peak_growth_mib(
      [&] { CHECK(file.write_all(data.data(), kWords, MPI_UINT64_T) == kBytesPerRank); });
  MESSAGE("peak growth writing 1 GiB per rank: " << write_growth << " MiB (allowed " << kAllowedMiB
                                                 << ")");
  CHECK(write_growth <= kAllowedMiB);
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  std::memset(data.data(), 0, data.size() * sizeof(std::uint64_t));
  file.seek(0, flowio::Whence::set);
  const double read_growth = peak_growth_mib(
      [&] { CHECK(file.read_all(data.data(), kWords, MPI_UINT64_T) == kBytesPerRank); });
  MESSAGE("peak growth reading 1 GiB per rank: " << read_growth << " MiB (allowed " << kAllowedMiB
                                                 << ")");
  CHECK(read_growth <= kAllowedMiB);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < kWords; ++i) {
    if (data[static_cast<std::size_t>(i)] != word_at(rank, i)) ++wrong;
  }
  CHECK(wrong == 0);
  file.close();
  MPI_Type_free(&tile);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) ::unlink(path.c_str());
}
