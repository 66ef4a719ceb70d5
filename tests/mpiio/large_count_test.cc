// Counts beyond 2^31 through the MPI-4 `_c` entry points of the layer
// (linked in): every rank writes 3 GiB + 5 bytes with one
// MPI_File_write_at_all_c from a 3 GiB mapping that is zero except for a
// marked page every 256 MiB (zero pages cost no memory), the status counts
// them all, and the file is read back in 256 MiB chunks with
// MPI_File_read_at_c and compared. It writes 3 GiB per rank to the page
// cache and takes tens of seconds on this machine: tagged manual, outside
// the default suite; run it with
//   bazel test //tests/mpiio:large_count_test_1ranks //tests/mpiio:large_count_test_2ranks
#include <doctest/doctest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/api/test_paths.h"

namespace {

constexpr MPI_Count kBytes = (MPI_Count{3} << 30) + 5;
constexpr MPI_Count kMarkEvery = MPI_Count{256} << 20;

unsigned char mark(int rank, MPI_Count at) {
  return static_cast<unsigned char>(1 + rank * 17 + at / kMarkEvery);
}

}  // namespace

TEST_CASE("Mpiio.LargeCount.WriteAndReadBeyondTwoGiBWithOneCall") {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  void* mapped = ::mmap(nullptr, static_cast<std::size_t>(kBytes), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  auto* data = static_cast<unsigned char*>(mapped);
  for (MPI_Count at = 0; at < kBytes; at += kMarkEvery) data[at] = mark(rank, at);
  data[kBytes - 1] = 0xEE;
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "large_count");
  MPI_File fh;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh) == MPI_SUCCESS);
  MPI_Status status;
  REQUIRE(MPI_File_write_at_all_c(fh, rank * kBytes, data, kBytes, MPI_BYTE, &status) ==
          MPI_SUCCESS);
  MPI_Count count = 0;
  MPI_Get_count_c(&status, MPI_BYTE, &count);
  CHECK(count == kBytes);
  ::munmap(mapped, static_cast<std::size_t>(kBytes));
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<unsigned char> chunk(static_cast<std::size_t>(kMarkEvery));
  bool right = true;
  for (MPI_Count at = 0; at < kBytes; at += kMarkEvery) {
    const MPI_Count length = std::min(kMarkEvery, kBytes - at);
    REQUIRE(MPI_File_read_at_c(fh, rank * kBytes + at, chunk.data(), length, MPI_BYTE, &status) ==
            MPI_SUCCESS);
    MPI_Get_count_c(&status, MPI_BYTE, &count);
    right = right && count == length && chunk[0] == mark(rank, at);
    for (MPI_Count i = 1; i < length - 1; i += 4093)
      right = right && chunk[static_cast<std::size_t>(i)] == 0;
    if (at + length == kBytes) right = right && chunk[static_cast<std::size_t>(length - 1)] == 0xEE;
  }
  CHECK(right);
  MPI_File_close(&fh);
  if (rank == 0) ::unlink(path.c_str());
}
