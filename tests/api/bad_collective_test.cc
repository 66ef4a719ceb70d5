// Collective data calls whose arguments are bad on one rank only, or that
// do not match between ranks (one rank reads while the others write), on
// 2 and 4 ranks. Every rank must fail with the same error code within a
// bounded time, and the file must work afterwards. Today the rank with bad
// arguments throws at the call and the others wait forever (or, for the
// mismatched directions, every rank "succeeds"): these cases are listed in
// tests/support/expected_failures.bzl until the collective engine's
// summary gather carries each rank's failure and direction. Each waits
// with a short deadline, so a hang fails the job quickly, naming the call.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/rank_outcomes.h"
#include "tests/support/world.h"

namespace {

using flowio::ErrorCode;
using namespace flowio::testing;

// Agreement on a failure needs one round of messages: a correct engine
// answers in milliseconds; this is the margin for a loaded machine.
constexpr std::chrono::seconds kDeadline{10};

bool is_last() { return world_rank() == world_size() - 1; }

constexpr int kInts = 1024;

// Where this rank's ints go, in bytes (the default view).
MPI_Offset my_offset() { return static_cast<MPI_Offset>(world_rank()) * kInts * sizeof(int); }

// Starts this rank's part of the call (`bad` on the last rank only).
using Start = std::function<flowio::Future<std::size_t>(flowio::File&, std::vector<int>&, bool)>;

// Opens a file every rank writes kInts ints to (gathered by aggregators:
// two-phase I/O), runs `start` on every rank and checks that every rank
// failed with `expected`, in time; then that the file still works.
void expect_every_rank_fails(const std::string& input, const Start& start, ErrorCode expected) {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "bad_collective");
  if (world_rank() == 0) ::unlink(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}});
  std::vector<int> data(kInts, world_rank());
  const Outcome mine = observe([&] {
    flowio::Future<std::size_t> pending = start(file, data, is_last());
    return flowio::testing::get_within(pending, kDeadline, input);
  });
  const std::vector<Outcome> all = gather_outcomes(mine);
  print_outcomes("collective data call, bad on the last rank only", input, all);
  for (int rank = 0; rank < world_size(); ++rank) {
    CAPTURE(rank);
    CHECK_MESSAGE(all[rank].failed_with(expected), flowio::testing::describe(all[rank]));
  }
  CHECK(slowest(all) < kDeadline.count());
  file.set_view(0, MPI_BYTE, MPI_BYTE);
  CHECK(file.write_at_all(my_offset(), data.data(), kInts, MPI_INT) == kInts * sizeof(int));
  file.close();
}

}  // namespace

// The control: the same calls with good arguments everywhere succeed on
// every rank (so a failure below is the bad argument's doing).
TEST_CASE("Api.BadCollective.GoodArgumentsEverywhere") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "good_collective");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}});
  std::vector<int> data(kInts, world_rank());
  const MPI_Offset at = my_offset();
  const Outcome mine = observe([&] {
    flowio::Future<std::size_t> pending = file.iwrite_at_all(at, data.data(), kInts, MPI_INT);
    return flowio::testing::get_within(pending, kDeadline, "iwrite_at_all");
  });
  const std::vector<Outcome> all = gather_outcomes(mine);
  for (const Outcome& outcome : all) CHECK(outcome.ok());
  std::vector<int> back(kInts, -1);
  CHECK(file.read_at_all(at, back.data(), kInts, MPI_INT) == kInts * sizeof(int));
  CHECK(back == data);
  file.close();
}

// The last rank passes a negative count.
TEST_CASE("Api.BadCollective.NegativeCountOnOneRank") {
  expect_every_rank_fails(
      "iwrite_at_all: count -1",
      [](flowio::File& file, std::vector<int>& data, bool bad) {
        return file.iwrite_at_all(my_offset(), data.data(), bad ? -1 : kInts, MPI_INT);
      },
      ErrorCode::invalid_count);
}

// The last rank passes an uncommitted datatype.
TEST_CASE("Api.BadCollective.UncommittedTypeOnOneRank") {
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(kInts, MPI_INT, &uncommitted);
  expect_every_rank_fails(
      "iwrite_at_all: uncommitted datatype",
      [&](flowio::File& file, std::vector<int>& data, bool bad) {
        return bad ? file.iwrite_at_all(my_offset(), data.data(), 1, uncommitted)
                   : file.iwrite_at_all(my_offset(), data.data(), kInts, MPI_INT);
      },
      ErrorCode::invalid_datatype);
  MPI_Type_free(&uncommitted);
}

// The last rank passes a null buffer with data to read.
TEST_CASE("Api.BadCollective.NullBufferOnOneRank") {
  expect_every_rank_fails(
      "iread_at_all: null buffer",
      [](flowio::File& file, std::vector<int>& data, bool bad) {
        return file.iread_at_all(my_offset(), bad ? nullptr : data.data(), kInts, MPI_INT);
      },
      ErrorCode::invalid_buffer);
}

// The last rank asks for a part of an etype (the view's etype is MPI_INT).
TEST_CASE("Api.BadCollective.PartialEtypeOnOneRank") {
  expect_every_rank_fails(
      "iwrite_at_all: 3 bytes with etype MPI_INT",
      [](flowio::File& file, std::vector<int>& data, bool bad) {
        file.set_view(0, MPI_INT, MPI_INT);
        // Offsets count ints now.
        const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) * kInts;
        return bad ? file.iwrite_at_all(at, data.data(), 3, MPI_BYTE)
                   : file.iwrite_at_all(at, data.data(), kInts, MPI_INT);
      },
      ErrorCode::invalid_datatype);
}

// The last rank reads while the others write, on the same file: MPI
// requires every process to make the same collective call.
TEST_CASE("Api.BadCollective.ReadWhileOthersWrite") {
  expect_every_rank_fails(
      "iread_at_all on the last rank, iwrite_at_all on the others",
      [](flowio::File& file, std::vector<int>& data, bool bad) {
        return bad ? file.iread_at_all(my_offset(), data.data(), kInts, MPI_INT)
                   : file.iwrite_at_all(my_offset(), data.data(), kInts, MPI_INT);
      },
      ErrorCode::not_same);
}
