// Blocking collective calls whose parts go direct are settled by the
// processes' announcements alone (runtime/stages/offsets_stage.cc): each
// process moves its own bytes at the call and announces the outcome. These
// tests hold the two ways out of that path: a failure on one process
// reaches every process, and a process that does not go direct makes the
// others' calls continue as operations (the data still right). Run on 1, 2
// and 4 ranks (on one process the call is its independent call).
#include <doctest/doctest.h>
#include <mpi.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

// The same value on every rank.
bool same_on_all_ranks(std::int64_t value) {
  std::int64_t low = 0, high = 0;
  MPI_Allreduce(&value, &low, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &high, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

// Rank 0 fills a fresh scratch file with `bytes` pattern bytes; every rank
// waits and gets its path.
std::string pattern_file(const std::string& name, std::int64_t bytes) {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, name);
  flowio::testing::write_pattern_file(path, bytes);
  return path;
}

// The pattern bytes of the file from `offset` on, `count` of them.
std::vector<char> expected(std::int64_t offset, std::int64_t count) {
  std::vector<char> bytes(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) bytes[static_cast<std::size_t>(i)] = pattern(offset + i);
  return bytes;
}

}  // namespace

// The last rank's second read fails (EIO from the backend, under the kept
// mapping) after every rank has read its own bytes: every rank's call
// throws the same IoError, with the agreement's stage in its statistics;
// the calls before and after return the right bytes, and every rank
// numbers its operations alike.
TEST_CASE("Api.SettledCall.ReadFailureOnOneRankReachesEveryRank") {
  const int rank = world_rank(), last = world_size() - 1;
  constexpr std::int64_t kBytes = 32768;
  const std::string path = pattern_file("settled_read_fault", kBytes * world_size());
  std::optional<flowio::testing::FaultScope> faults;
  if (rank == last) faults.emplace("on=read,nth=2,fault=eio");
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  faults.reset();
  const std::int64_t offset = rank * kBytes;
  std::vector<char> back(kBytes, '#');

  CHECK(file.read_at_all(offset, back.data(), kBytes, MPI_CHAR) == kBytes);
  CHECK(back == expected(offset, kBytes));

  bool right_error = false;
  try {
    file.read_at_all(offset, back.data(), kBytes, MPI_CHAR);
    FAIL_CHECK("a read that failed on rank " << last << " succeeded on rank " << rank);
  } catch (const flowio::IoError& error) {
    CHECK(error.system_errno() == EIO);
    right_error = error.system_errno() == EIO;
  } catch (const flowio::Error& error) {
    FAIL_CHECK("not an IoError: " << std::string(error.what()));
  }
  CHECK(all_ranks(right_error));

  std::fill(back.begin(), back.end(), '#');
  CHECK(file.read_at_all(offset, back.data(), kBytes, MPI_CHAR) == kBytes);
  CHECK(back == expected(offset, kBytes));

  const std::vector<flowio::OperationStatistics> all = file.statistics();
  REQUIRE(all.size() == 3);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CAPTURE(i);
    CHECK(same_on_all_ranks(static_cast<std::int64_t>(all[i].sequence)));
    CHECK(all[i].aggregators == world_size());
    const bool failed_here = i == 1 && rank == last;
    CHECK(all[i].method == (failed_here ? "" : "direct"));
    double agree_seconds = 0;
    std::int64_t io_bytes = -1;
    for (const flowio::StageStatistics& stage : all[i].stages) {
      if (stage.name == "agree") agree_seconds = stage.seconds;
      if (stage.name == "io") io_bytes = stage.bytes;
    }
    // Settled calls agree with the announcements alone; the failed one
    // ran the agreement.
    CHECK((agree_seconds > 0) == (i == 1));
    CHECK(io_bytes == (failed_here ? 0 : kBytes));
  }
  file.close();
}

// Rank 0 reads many small pieces (every other 8 bytes of its region: too
// small to go direct), the others read one contiguous piece each and so do
// their part early: their announcements find a process that did not, so
// the call continues as an operation (two-phase I/O), and every rank gets
// the right bytes, twice (the second time from a kept plan); then a call
// where every rank goes direct is settled again.
TEST_CASE("Api.SettledCall.AProcessNotGoingDirectMakesTheOthersContinue") {
  const int rank = world_rank();
  constexpr std::int64_t kBytes = 8192;  // read per rank; each rank's region is twice that
  const std::string path = pattern_file("settled_fallback", 2 * kBytes * world_size());
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  const std::int64_t region = 2 * kBytes * rank;
  MPI_Datatype piece = MPI_DATATYPE_NULL;
  if (rank == 0) {
    MPI_Datatype eight = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(8, MPI_BYTE, &eight);
    MPI_Type_create_resized(eight, 0, 16, &piece);
    MPI_Type_commit(&piece);
    MPI_Type_free(&eight);
    file.set_view(region, MPI_BYTE, piece);
  } else {
    file.set_view(region, MPI_BYTE, MPI_BYTE);
  }
  std::vector<char> want(kBytes);
  for (std::int64_t i = 0; i < kBytes; ++i) {
    const std::int64_t at = rank == 0 ? i / 8 * 16 + i % 8 : i;
    want[static_cast<std::size_t>(i)] = pattern(region + at);
  }

  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    std::vector<char> back(kBytes, '#');
    CHECK(file.read_at_all(0, back.data(), kBytes, MPI_CHAR) == kBytes);
    CHECK(back == want);
    const flowio::OperationStatistics last = file.statistics().back();
    CHECK(same_on_all_ranks(static_cast<std::int64_t>(last.sequence)));
    // Two-phase I/O where more than one process takes part (one process
    // alone makes its independent call), its plan kept from the first
    // round for the second; the other ranks had done their part early.
    if (world_size() > 1) {
      CHECK(last.plan_reused == (round == 1));
      CHECK((last.method.find("direct") != std::string::npos) == (rank != 0));
    }
  }

  // Every rank contiguous again: settled by the announcements.
  file.set_view(region, MPI_BYTE, MPI_BYTE);
  std::vector<char> back(kBytes, '#');
  CHECK(file.read_at_all(kBytes, back.data(), kBytes, MPI_CHAR) == kBytes);
  CHECK(back == expected(region + kBytes, kBytes));
  const flowio::OperationStatistics last = file.statistics().back();
  CHECK(last.method == "direct");
  CHECK(same_on_all_ranks(static_cast<std::int64_t>(last.sequence)));
  if (piece != MPI_DATATYPE_NULL) MPI_Type_free(&piece);
  file.close();
}
