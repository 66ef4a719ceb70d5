// flowio::File on 1, 2 and 4 ranks: modes, pointers, end of file, sizes,
// futures, and errors that every rank must see.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <numeric>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/future_deadline.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

// Each rank sees every world_size()-th int of the file, shifted by rank.
MPI_Datatype interleaved_ints() {
  MPI_Datatype one, tiled;
  MPI_Type_contiguous(1, MPI_INT, &one);
  MPI_Type_create_resized(one, 0, static_cast<MPI_Aint>(sizeof(int)) * world_size(), &tiled);
  MPI_Type_commit(&tiled);
  MPI_Type_free(&one);
  return tiled;
}

}  // namespace

// Interleaved writes through futures, then reads, through the individual
// file pointer; the file holds 0..N-1 in order.
TEST_CASE("Api.File.InterleavedWriteAndRead") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "file_interleaved");
  const int rank = world_rank(), ranks = world_size();
  MPI_Datatype filetype = interleaved_ints();
  constexpr int kPerRank = 1000;
  std::vector<int> mine(kPerRank);
  for (int i = 0; i < kPerRank; ++i) mine[i] = i * ranks + rank;
  {
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
    file.set_view(rank * sizeof(int), MPI_INT, filetype);
    flowio::Future<std::size_t> first = file.iwrite(mine.data(), kPerRank / 2, MPI_INT);
    flowio::Future<std::size_t> second =
        file.iwrite(mine.data() + kPerRank / 2, kPerRank / 2, MPI_INT);
    CHECK(file.position() == kPerRank);
    CHECK(first.get() == kPerRank / 2 * sizeof(int));
    CHECK(second.get() == kPerRank / 2 * sizeof(int));
    file.sync();
    CHECK(file.size() == static_cast<MPI_Offset>(kPerRank * ranks * sizeof(int)));
    file.seek(0, flowio::Whence::set);
    std::vector<int> back(kPerRank, -1);
    CHECK(file.read(back.data(), kPerRank, MPI_INT) == kPerRank * sizeof(int));
    CHECK(back == mine);
    CHECK(file.byte_offset(1) == static_cast<MPI_Offset>((ranks + rank) * sizeof(int)));
    file.seek(-2, flowio::Whence::end);
    CHECK(file.position() == kPerRank - 2);
    file.close();
    CHECK_FALSE(file.is_open());
  }
  std::vector<int> whole(static_cast<std::size_t>(kPerRank) * ranks);
  flowio::File reader = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  CHECK(reader.read_at(0, whole.data(), static_cast<MPI_Count>(whole.size()), MPI_INT) ==
        whole.size() * sizeof(int));
  std::vector<int> expected(whole.size());
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(whole == expected);
  reader.close();
  MPI_Type_free(&filetype);
}

// A read that runs past end of file returns the bytes before it and leaves
// the rest of the buffer untouched.
TEST_CASE("Api.File.ReadPastEndOfFile") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "file_eof");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close);
  if (world_rank() == 0) {
    const char text[] = "0123456789";
    file.write_at(0, text, 10, MPI_CHAR);
  }
  file.sync();
  std::vector<char> buffer(16, '#');
  CHECK(file.read_at(4, buffer.data(), 16, MPI_CHAR) == 6);
  CHECK(std::string(buffer.data(), 16) == "456789##########");
  CHECK(file.read_at(100, buffer.data(), 4, MPI_CHAR) == 0);
  file.close();
  CHECK(access(path.c_str(), F_OK) != 0);  // deleted on close
}

// set_size, preallocate and append mode.
TEST_CASE("Api.File.SizesAndAppend") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "file_sizes");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  file.set_size(4096);
  CHECK(file.size() == 4096);
  file.preallocate(1024);
  CHECK(file.size() == 4096);  // preallocate never shrinks
  file.preallocate(8192);
  CHECK(file.size() == 8192);
  file.set_size(100);
  CHECK(file.size() == 100);
  file.close();
  flowio::File appender =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::wronly | flowio::Mode::append);
  CHECK(appender.position() == 100);
  CHECK(appender.hints().count("flowio_io_backend") == 1);
  appender.close();
}

// Bad input is refused at the call with a typed error and the MPI-like code.
TEST_CASE("Api.File.UsageErrors") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "file_usage");
  CHECK_THROWS_AS(
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly | flowio::Mode::rdwr),
      flowio::UsageError);
  CHECK_THROWS_AS(
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly | flowio::Mode::create),
      flowio::UsageError);
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly);
  int value = 7;
  try {
    file.write_at(0, &value, -1, MPI_INT);
    FAIL("negative count accepted");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::invalid_count);
  }
  try {
    file.read_at(0, &value, 1, MPI_INT);
    FAIL("read on a write-only file accepted");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::access_denied);
  }
  CHECK_THROWS_AS(file.write_at(0, &value, 1, MPI_DATATYPE_NULL), flowio::UsageError);
  file.set_view(0, MPI_INT, MPI_INT);
  char three[3] = {};
  CHECK_THROWS_AS(file.write_at(0, three, 3, MPI_CHAR), flowio::UsageError);
  file.close();
  try {
    file.write_at(0, &value, 1, MPI_INT);
    FAIL("write on a closed file accepted");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::file_closed);
  }
  flowio::File reader = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  try {
    reader.write_at(0, &value, 1, MPI_INT);
    FAIL("write on a read-only file accepted");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::read_only);
  }
  reader.close();
}

// A view that is invalid on one rank only makes set_view throw everywhere,
// so no rank goes on alone.
TEST_CASE("Api.File.InvalidViewOnOneRankFailsEverywhere") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "file_badview");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  const int last = world_size() - 1;
  int lengths[] = {1, 1};
  int displacements[] = {world_rank() == last ? 3 : 0, world_rank() == last ? 0 : 3};
  MPI_Datatype type;
  MPI_Type_indexed(2, lengths, displacements, MPI_INT, &type);
  MPI_Type_commit(&type);
  CHECK_THROWS_AS(file.set_view(0, MPI_INT, type), flowio::Error);
  file.close();
  MPI_Type_free(&type);
}

// Opening a missing file fails on every rank with no_such_file; excl on an
// existing file fails with file_exists.
TEST_CASE("Api.File.OpenErrorsAgreed") {
  const std::string missing = flowio::testing::scratch_path(MPI_COMM_WORLD, "no/such/file");
  try {
    flowio::File::open(MPI_COMM_WORLD, missing, flowio::Mode::rdonly);
    FAIL("opened a missing file");
  } catch (const flowio::Error& error) {
    CHECK(error.code() == flowio::ErrorCode::no_such_file);
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "file_excl");
  flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly).close();
  try {
    flowio::File::open(MPI_COMM_WORLD, path,
                       flowio::Mode::create | flowio::Mode::excl | flowio::Mode::wronly);
    FAIL("excl opened an existing file");
  } catch (const flowio::Error& error) {
    CHECK(error.code() == flowio::ErrorCode::file_exists);
  }
}

// An I/O failure (ENOSPC from /dev/full) arrives through the future as an
// IoError with its errno; the caller is never blocked by it.
TEST_CASE("Api.File.IoErrorReachesTheFuture") {
  flowio::File full = flowio::File::open(MPI_COMM_WORLD, "/dev/full", flowio::Mode::wronly);
  std::vector<char> data(1 << 16, 'x');
  flowio::Future<std::size_t> pending =
      full.iwrite_at(0, data.data(), static_cast<MPI_Count>(data.size()), MPI_CHAR);
  try {
    flowio::testing::get_within(pending, "iwrite_at to /dev/full");
    FAIL("write to /dev/full succeeded");
  } catch (const flowio::IoError& error) {
    CHECK(error.code() == flowio::ErrorCode::no_space);
    CHECK(error.system_errno() == ENOSPC);
  }
  full.close();
}

// then() chains a continuation that sees the value, and exceptions thrown in
// it reach the chained future.
TEST_CASE("Api.Future.ThenPropagatesValuesAndErrors") {
  flowio::Promise<int> promise;
  flowio::Future<int> doubled =
      promise.get_future().then([](flowio::Future<int> ready) { return ready.get() * 2; });
  CHECK_FALSE(doubled.ready());
  promise.set_value(21);
  CHECK(doubled.get() == 42);
  flowio::Future<void> failing = flowio::make_ready_future(1).then([](flowio::Future<int>) {
    throw flowio::UsageError(flowio::ErrorCode::invalid_argument, "x");
  });
  CHECK_THROWS_AS(failing.get(), flowio::UsageError);
  flowio::Future<int> broken;
  {
    flowio::Promise<int> abandoned;
    broken = abandoned.get_future();
  }
  CHECK_THROWS_AS(broken.get(), std::logic_error);
}
