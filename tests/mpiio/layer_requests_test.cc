// The MPI-IO layer's requests and statuses, with the layer linked in (the
// MPI_File_* calls here are the layer's, PMPI_* MPICH's): a request whose
// operation finishes on flowio's I/O thread completes under an
// MPI_Request_get_status loop (which MPICH 4.0.2 does not poll generalized
// requests in); a small nonblocking access is complete when its call
// returns; statuses filled directly hold what MPI_Status_set_elements_x
// would store.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/mpiio/requests.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;

std::string scratch_path(const char* name) {
  const char* directory = std::getenv("TEST_TMPDIR");
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return std::string(directory != nullptr ? directory : "/tmp") + "/" + name + "." +
         std::to_string(ranks);
}

}  // namespace

// A 1 MiB write (done on the I/O thread) is seen complete by a loop of
// MPI_Request_get_status alone, with its count; MPI_Wait then frees it.
TEST_CASE("Mpiio.Requests.GetStatusLoopCompletes") {
  const std::string path = scratch_path("layer_get_status");
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &file) == MPI_SUCCESS);
  std::vector<char> data(1 << 20, static_cast<char>(world_rank() + 1));
  MPI_Request request;
  REQUIRE(MPI_File_iwrite_at(file, static_cast<MPI_Offset>(world_rank()) << 20, data.data(),
                             static_cast<int>(data.size()), MPI_BYTE, &request) == MPI_SUCCESS);
  int flag = 0;
  MPI_Status status;
  const double started = MPI_Wtime();
  while (!flag && MPI_Wtime() - started < 30) {
    REQUIRE(MPI_Request_get_status(request, &flag, &status) == MPI_SUCCESS);
  }
  REQUIRE(flag);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  CHECK(count == static_cast<int>(data.size()));
  CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(request == MPI_REQUEST_NULL);
  CHECK(MPI_File_close(&file) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
}

// A 4 KiB write is done at the call: MPICH's own MPI_Request_get_status
// (no help from the layer) already finds its request complete.
TEST_CASE("Mpiio.Requests.SmallAccessCompleteAtTheCall") {
  const std::string path = scratch_path("layer_small");
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &file) == MPI_SUCCESS);
  std::vector<char> data(4096, 'x');
  MPI_Request request;
  REQUIRE(MPI_File_iwrite_at(file, world_rank() * 4096, data.data(), 4096, MPI_BYTE, &request) ==
          MPI_SUCCESS);
  int flag = 0;
  MPI_Status status;
  REQUIRE(PMPI_Request_get_status(request, &flag, &status) == MPI_SUCCESS);
  CHECK(flag);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  CHECK(count == 4096);
  CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&file) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
}

// A request freed with MPI_Request_free while its 1 MiB write is in
// flight: the write still completes, and the close waits for it, so that
// the bytes are there when the file is opened again.
TEST_CASE("Mpiio.Requests.FreedRequestStillWrites") {
  const std::string path = scratch_path("layer_freed");
  const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) << 20;
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &file) == MPI_SUCCESS);
  std::vector<char> data(1 << 20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + world_rank());
  MPI_Request request;
  REQUIRE(MPI_File_iwrite_at(file, at, data.data(), static_cast<int>(data.size()), MPI_BYTE,
                             &request) == MPI_SUCCESS);
  CHECK(MPI_Request_free(&request) == MPI_SUCCESS);
  CHECK(request == MPI_REQUEST_NULL);
  CHECK(MPI_File_close(&file) == MPI_SUCCESS);
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file) ==
          MPI_SUCCESS);
  std::vector<char> back(data.size());
  CHECK(MPI_File_read_at(file, at, back.data(), static_cast<int>(back.size()), MPI_BYTE,
                         MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(back == data);
  CHECK(MPI_File_close(&file) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
}

// A request polled once by MPI_Test while its write is in flight is left
// for a waiter to complete; a program that then loops on
// MPI_Request_get_status alone must still see it complete (the layer's
// MPI_Request_get_status completes it). The write is 64 MiB so that it is
// still in flight at the test; on a machine so loaded that it is not, the
// attempt is repeated (up to 10 times, each checked the same way).
TEST_CASE("Mpiio.Requests.GetStatusAfterATestCompletes") {
  const std::string path = scratch_path("layer_test_then_get_status");
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &file) == MPI_SUCCESS);
  std::vector<char> data(64 << 20, static_cast<char>(world_rank() + 1));
  int in_flight_at_test = 0;
  for (int attempt = 0; attempt < 10 && !in_flight_at_test; ++attempt) {
    MPI_Request request;
    REQUIRE(MPI_File_iwrite_at(file, static_cast<MPI_Offset>(world_rank()) << 26, data.data(),
                               static_cast<int>(data.size()), MPI_BYTE, &request) == MPI_SUCCESS);
    int flag = 0;
    REQUIRE(MPI_Test(&request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (flag) continue;
    in_flight_at_test = 1;
    const double started = MPI_Wtime();
    while (!flag && MPI_Wtime() - started < 30) {
      REQUIRE(MPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    CHECK(flag);
    CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  CHECK(in_flight_at_test);
  CHECK(MPI_File_close(&file) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
}

// fill_status writes MPICH's status fields itself; every count MPI can
// express must read back through MPI_Get_elements_x and MPI_Get_count as
// after MPI_Status_set_elements_x, and the status must not be cancelled.
TEST_CASE("Mpiio.Requests.StatusCountsAsMpichStoresThem") {
  const std::int64_t counts[] = {0,
                                 1,
                                 4096,
                                 INT32_MAX,
                                 std::int64_t{1} << 31,
                                 (std::int64_t{5} << 30) + 7,
                                 (std::int64_t{1} << 40) + 3};
  for (const std::int64_t bytes : counts) {
    INFO("bytes " << bytes);
    MPI_Status ours, theirs;
    flowio::mpiio::fill_status(&ours, static_cast<std::size_t>(bytes));
    MPI_Status_set_elements_x(&theirs, MPI_BYTE, bytes);
    MPI_Status_set_cancelled(&theirs, 0);
    MPI_Count elements = -1;
    MPI_Get_elements_x(&ours, MPI_BYTE, &elements);
    CHECK(elements == bytes);
    int ours_count = -1, theirs_count = -1;
    MPI_Get_count(&ours, MPI_BYTE, &ours_count);
    MPI_Get_count(&theirs, MPI_BYTE, &theirs_count);
    CHECK(ours_count == theirs_count);
    int cancelled = 1;
    MPI_Test_cancelled(&ours, &cancelled);
    CHECK(cancelled == 0);
    CHECK(ours.MPI_ERROR == MPI_SUCCESS);
  }
}
