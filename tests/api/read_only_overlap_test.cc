// Views whose pieces overlap, on files opened read-only (MPI 4.1, 14.3):
// every read call, from any place in a tile, returns the view's stream in
// typemap order, collective ones included (which read this process's data
// independently, then take part in the collective protocol, whose
// agreement tells every process of a failure anywhere).
#include <doctest/doctest.h>
#include <mpi.h>

#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;

// Stream element k of a view of the ints [0, 12) then [4, 8) tiled by 12
// bytes from int `first`.
int expected(int first, int k) { return first + 3 * (k / 4) + (k % 4 == 3 ? 1 : k % 4); }

// Writes `ints` ints per rank at `path`, rank r's block holding
// r * ints, r * ints + 1, ...
void write_numbered_ints(const std::string& path, int ints) {
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly);
  std::vector<int> mine(static_cast<std::size_t>(ints));
  for (int i = 0; i < ints; ++i) mine[static_cast<std::size_t>(i)] = world_rank() * ints + i;
  file.write_at_all(world_rank() * ints * sizeof(int), mine.data(), ints, MPI_INT);
  file.close();
}

// The filetype of `expected`: ints [0, 3) then [1, 2), committed.
MPI_Datatype overlapping_type() {
  const int lengths[] = {3, 1};
  const int displacements[] = {0, 1};
  MPI_Datatype overlap;
  MPI_Type_indexed(2, lengths, displacements, MPI_INT, &overlap);
  MPI_Type_commit(&overlap);
  return overlap;
}

}  // namespace

// Reads from inside a tile, independent and collective, blocking and not;
// the same view on a file open for writing is refused.
TEST_CASE("Api.ReadOnlyOverlap.ReadsFollowTheTypemap") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "read_only_overlap");
  const int rank = world_rank();
  constexpr int kInts = 200;
  write_numbered_ints(path, kInts);
  MPI_Datatype overlap = overlapping_type();
  {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr);
    CHECK_THROWS_AS(file.set_view(0, MPI_INT, overlap), flowio::UsageError);
    file.close();
  }
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly, {{"romio_cb_read", "enable"}});
  const int first = rank * kInts;
  file.set_view(first * sizeof(int), MPI_INT, overlap);
  for (int offset : {0, 1, 2, 3, 6, 13}) {
    CAPTURE(offset);
    std::vector<int> got(25, -1);
    CHECK(file.read_at(offset, got.data(), 25, MPI_INT) == 25 * sizeof(int));
    std::vector<int> collective(25, -1);
    CHECK(file.read_at_all(offset, collective.data(), 25, MPI_INT) == 25 * sizeof(int));
    std::vector<int> nonblocking(25, -1);
    CHECK(file.iread_at_all(offset, nonblocking.data(), 25, MPI_INT).get() == 25 * sizeof(int));
    for (int k = 0; k < 25; ++k) {
      const auto i = static_cast<std::size_t>(k);
      CHECK(got[i] == expected(first, offset + k));
      CHECK(collective[i] == expected(first, offset + k));
      CHECK(nonblocking[i] == expected(first, offset + k));
    }
  }
  file.close();
  MPI_Type_free(&overlap);
}

// A collective read through an overlapping view with bad arguments on one
// process: every process's call fails (the others' too, told by the
// gather), and the next collective call on the file works.
TEST_CASE("Api.ReadOnlyOverlap.BadArgumentsOnOneProcessFailEveryProcess") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "read_only_overlap_bad");
  const int rank = world_rank();
  constexpr int kInts = 64;
  write_numbered_ints(path, kInts);
  MPI_Datatype overlap = overlapping_type();
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  const int first = rank * kInts;
  file.set_view(first * sizeof(int), MPI_INT, overlap);
  const bool bad = rank == flowio::testing::world_size() - 1;
  std::vector<int> got(8, -1);
  CHECK_THROWS_AS(file.read_at_all(bad ? -1 : 0, got.data(), 8, MPI_INT), flowio::UsageError);
  CHECK_THROWS_AS(file.iread_at_all(0, got.data(), bad ? -8 : 8, MPI_INT).get(),
                  flowio::UsageError);
  CHECK(file.read_at_all(2, got.data(), 8, MPI_INT) == 8 * sizeof(int));
  for (int k = 0; k < 8; ++k) CHECK(got[static_cast<std::size_t>(k)] == expected(first, 2 + k));
  file.close();
  MPI_Type_free(&overlap);
}

// A collective read through an overlapping view whose file read fails on
// one process: every process's call fails with that I/O error (the
// others' through the agreement), blocking and nonblocking.
TEST_CASE("Api.ReadOnlyOverlap.ReadFailureOnOneProcessFailsEveryProcess") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "read_only_overlap_eio");
  const int rank = world_rank();
  const int last = flowio::testing::world_size() - 1;
  constexpr int kInts = 64;
  write_numbered_ints(path, kInts);
  MPI_Datatype overlap = overlapping_type();
  {
    const flowio::testing::FaultScope scope("on=read,rank=" + std::to_string(last) +
                                            ",times=0,fault=eio");
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
    file.set_view(rank * kInts * sizeof(int), MPI_INT, overlap);
    std::vector<int> got(8, -1);
    CHECK_THROWS_AS(file.read_at_all(0, got.data(), 8, MPI_INT), flowio::IoError);
    CHECK_THROWS_AS(file.iread_at_all(0, got.data(), 8, MPI_INT).get(), flowio::IoError);
    file.close();
  }
  MPI_Type_free(&overlap);
}
