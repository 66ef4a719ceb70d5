// Counts above 2^31 through the C++ API: 2^31 + 4096 bytes written and read
// back in one call, independent and collective (two-phase forced), and as
// 2^29 + 1024 copies of an 8-byte vector type (the count fits an int, the
// bytes do not). Each moves 2 GiB through memory and the page cache, so it
// is left out of the suite (tag manual); tools/soak.sh runs it.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"

namespace {

constexpr std::int64_t kBytes = (std::int64_t{1} << 31) + 4096;

char pattern(std::int64_t i) { return static_cast<char>(1 + (i * 131 + i / 4093) % 251); }

// The first differing byte, or -1.
std::int64_t first_difference(const std::vector<char>& data) {
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(data.size()); ++i) {
    if (data[static_cast<std::size_t>(i)] != pattern(i)) return i;
  }
  return -1;
}

void write_and_read_back(flowio::File& file, bool collective, MPI_Count count, MPI_Datatype type,
                         std::vector<char>& data) {
  for (std::int64_t i = 0; i < kBytes; ++i) data[static_cast<std::size_t>(i)] = pattern(i);
  const std::size_t wrote = collective ? file.write_at_all(0, data.data(), count, type)
                                       : file.write_at(0, data.data(), count, type);
  CHECK(wrote == static_cast<std::size_t>(kBytes));
  std::fill(data.begin(), data.end(), 0);
  const std::size_t read = collective ? file.read_at_all(0, data.data(), count, type)
                                      : file.read_at(0, data.data(), count, type);
  CHECK(read == static_cast<std::size_t>(kBytes));
  CHECK(first_difference(data) == -1);
}

}  // namespace

// One rank, one call of 2^31 + 4096 bytes each way, by every route.
TEST_CASE("Api.LargeCount.CountsAbove2To31") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "large_count");
  std::vector<char> data(static_cast<std::size_t>(kBytes));
  MPI_Datatype eight;
  MPI_Type_contiguous(8, MPI_BYTE, &eight);
  MPI_Type_commit(&eight);
  for (const bool collective : {false, true}) {
    CAPTURE(collective);
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                           {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}});
    write_and_read_back(file, collective, kBytes, MPI_BYTE, data);
    write_and_read_back(file, collective, kBytes / 8, eight, data);
    CHECK(file.size() == kBytes);
    file.close();
  }
  MPI_Type_free(&eight);
  ::unlink(path.c_str());
}
