// Filetypes and memory types whose extent passes 2^31 - 1 bytes, in real
// I/O: a 3 GiB subarray as filetype (a sparse file: 48 rows of 16 KiB per
// rank, 64 MiB apart) and as memory type (over a 3 GiB mapping of which
// only the subarray's pages are touched), written and read back
// collectively and independently. Memory and disk use stay at a few MiB.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/address_space.h"
#include "tests/support/world.h"

namespace {

constexpr std::int64_t kRows = 48;
constexpr std::int64_t kRowBytes = std::int64_t{64} << 20;  // 48 * 64 MiB = 3 GiB
constexpr std::int64_t kBlockBytes = 16 << 10;
constexpr std::int64_t kExtent = kRows * kRowBytes;

using flowio::testing::AddressSpace;
using flowio::testing::world_rank;

// Rank r's block of each row starts 1 MiB + r * 16 KiB into the row.
std::int64_t column_of(int rank) { return (std::int64_t{1} << 20) + rank * kBlockBytes; }

MPI_Datatype rows_of(int rank) {
  const int sizes[] = {static_cast<int>(kRows), static_cast<int>(kRowBytes)};
  const int subsizes[] = {static_cast<int>(kRows), static_cast<int>(kBlockBytes)};
  const int starts[] = {0, static_cast<int>(column_of(rank))};
  MPI_Datatype type;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  return type;
}

unsigned char byte_at(int rank, std::int64_t row, std::int64_t i) {
  return static_cast<unsigned char>(rank * 31 + row * 7 + i * 13 + 1);
}

}  // namespace

// The subarray as filetype and as memory type, both 3 GiB of extent.
TEST_CASE("Api.LargeTypes.ThreeGiBSubarrayOnASparseFile") {
  const int rank = world_rank();
  MPI_Datatype rows = rows_of(rank);
  MPI_Count extent = 0, lb = 0;
  MPI_Type_get_extent_x(rows, &lb, &extent);
  REQUIRE(extent == kExtent);
  const AddressSpace source(kExtent), independent(kExtent), collective(kExtent);
  for (std::int64_t row = 0; row < kRows; ++row) {
    unsigned char* block = source.data() + row * kRowBytes + column_of(rank);
    for (std::int64_t i = 0; i < kBlockBytes; ++i) block[i] = byte_at(rank, row, i);
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "large_subarray");
  for (const char* buffering : {"enable", "disable"}) {
    CAPTURE(std::string(buffering));
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                           {{"romio_cb_write", buffering}, {"romio_cb_read", buffering}});
    file.set_view(0, MPI_BYTE, rows);
    const std::size_t bytes = kRows * kBlockBytes;
    CHECK(file.write_at_all(0, source.data(), 1, rows) == bytes);
    CHECK(file.write_at(0, source.data(), 1, rows) == bytes);  // the same bytes again
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(file.read_at_all(0, collective.data(), 1, rows) == bytes);
    CHECK(file.read_at(0, independent.data(), 1, rows) == bytes);
    bool same = true;
    for (std::int64_t row = 0; row < kRows; ++row) {
      const std::int64_t at = row * kRowBytes + column_of(rank);
      same = same && std::memcmp(collective.data() + at, source.data() + at, kBlockBytes) == 0 &&
             std::memcmp(independent.data() + at, source.data() + at, kBlockBytes) == 0;
    }
    CHECK(same);
    // The last row, straight from the file: past 2^31 and 2^32.
    if (rank == 0) {
      const int fd = ::open(path.c_str(), O_RDONLY);
      std::vector<unsigned char> last(kBlockBytes);
      CHECK(::pread(fd, last.data(), last.size(), (kRows - 1) * kRowBytes + column_of(0)) ==
            static_cast<ssize_t>(last.size()));
      CHECK(last[5] == byte_at(0, kRows - 1, 5));
      struct stat info;
      ::fstat(fd, &info);
      CHECK(info.st_size > (std::int64_t{3} << 30) - kRowBytes);
      CHECK(info.st_blocks * 512 < (std::int64_t{64} << 20));  // sparse
      ::close(fd);
    }
    file.close();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Type_free(&rows);
}
