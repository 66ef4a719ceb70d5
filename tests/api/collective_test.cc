// Collective data access (write_all, read_all and their _at and nonblocking
// forms) on 1, 2 and 4 ranks: corner cases of who has data, the file
// pointer, end of file, errors every rank must see, and several operations
// in flight (statistics and hints: collective_statistics_test.cc).
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/interleaved_view.h"
#include "tests/api/test_paths.h"
#include "tests/support/fault_scope.h"
#include "tests/support/future_deadline.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;

// The byte every test expects at `file_offset` of a file it wrote.
std::string describe(const flowio::Hints& hints) {
  std::string text;
  for (const auto& [key, value] : hints) text += key + "=" + value + " ";
  return text;
}

}  // namespace

// Every rank contributes nothing (count 0, or an empty datatype): every form
// returns 0, the pointer stays put, and the file is untouched.
TEST_CASE("Api.Collective.EveryRankEmpty") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_empty");
  write_pattern_file(path, 1000);
  MPI_Datatype nothing;
  MPI_Type_contiguous(0, MPI_INT, &nothing);
  MPI_Type_commit(&nothing);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr,
                                         {{"cb_nodes", "1"}, {"cb_buffer_size", "64"}});
  int unused = 0;
  CHECK(file.write_all(nullptr, 0, MPI_INT) == 0);
  CHECK(file.write_at_all(10, &unused, 5, nothing) == 0);
  CHECK(file.iwrite_all(&unused, 3, nothing).get() == 0);
  CHECK(file.iwrite_at_all(100, nullptr, 0, MPI_BYTE).get() == 0);
  CHECK(file.read_all(&unused, 0, MPI_INT) == 0);
  CHECK(file.iread_at_all(5, &unused, 2, nothing).get() == 0);
  CHECK(unused == 0);
  CHECK(file.position() == 0);
  file.close();
  MPI_Type_free(&nothing);
  if (world_rank() == 0) {
    const std::vector<char> contents = read_whole_file(path);
    REQUIRE(contents.size() == 1000);
    for (std::size_t i = 0; i < contents.size(); ++i) {
      if (contents[i] != pattern(static_cast<std::int64_t>(i))) {
        FAIL_CHECK("byte " << i << " changed");
        break;
      }
    }
  }
}

// Only the last rank has data and it is no aggregator (rank 0 aggregates
// alone, through many small buffer iterations): its bytes still reach the
// file, and read back through the same path.
TEST_CASE("Api.Collective.OnlyOneRankHasData") {
  const std::string path = fresh_path("coll_one_rank");
  const int rank = world_rank(), last = world_size() - 1;
  constexpr std::int64_t kBytes = 10000;
  constexpr MPI_Offset kStart = 37;
  std::vector<char> data(kBytes);
  for (std::int64_t i = 0; i < kBytes; ++i) data[static_cast<std::size_t>(i)] = pattern(kStart + i);
  const MPI_Count count = rank == last ? kBytes : 0;
  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
      {{"cb_nodes", "1"}, {"flowio_aggregators", "0"}, {"cb_buffer_size", "256"}});
  CHECK(file.write_at_all(kStart, data.data(), count, MPI_CHAR) == static_cast<std::size_t>(count));
  file.sync();
  CHECK(file.size() == kStart + kBytes);
  std::vector<char> back(kBytes, '#');
  CHECK(file.iread_at_all(kStart, back.data(), count, MPI_CHAR).get() ==
        static_cast<std::size_t>(count));
  if (rank == last) {
    CHECK(back == data);
  } else {
    CHECK(std::count(back.begin(), back.end(), '#') == kBytes);
  }
  file.close();
  if (rank == 0) {
    const std::vector<char> contents = read_whole_file(path);
    REQUIRE(contents.size() == static_cast<std::size_t>(kStart + kBytes));
    CHECK(std::count(contents.begin(), contents.begin() + kStart, '\0') == kStart);
    CHECK(std::equal(data.begin(), data.end(), contents.begin() + kStart));
  }
}

// The forms without an offset use the individual file pointer and advance
// it at the call, before the Future is ready; the _at forms leave it alone.
TEST_CASE("Api.Collective.PointerFormsAdvanceThePointer") {
  const std::string path = fresh_path("coll_pointer");
  const int rank = world_rank();
  constexpr int kInts = 3000;
  const InterleavedView view(static_cast<int>(sizeof(int)));
  std::vector<int> mine(kInts);
  for (int i = 0; i < kInts; ++i) mine[static_cast<std::size_t>(i)] = i * world_size() + rank;
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"cb_buffer_size", "1000"}, {"flowio_buffers_in_flight", "2"}});
  view.apply(file, MPI_INT);
  flowio::Future<std::size_t> first = file.iwrite_all(mine.data(), kInts / 3, MPI_INT);
  CHECK(file.position() == kInts / 3);
  flowio::Future<std::size_t> second =
      file.iwrite_all(mine.data() + kInts / 3, kInts - kInts / 3, MPI_INT);
  CHECK(file.position() == kInts);
  CHECK(first.get() == kInts / 3 * sizeof(int));
  CHECK(second.get() == (kInts - kInts / 3) * sizeof(int));
  int extra = -1;
  CHECK(file.write_at_all(kInts, &extra, 1, MPI_INT) == sizeof(int));
  CHECK(file.position() == kInts);

  file.seek(0, flowio::Whence::set);
  std::vector<int> back(kInts, -7);
  flowio::Future<std::size_t> head = file.iread_all(back.data(), kInts / 2, MPI_INT);
  CHECK(file.position() == kInts / 2);
  CHECK(file.read_all(back.data() + kInts / 2, kInts - kInts / 2, MPI_INT) ==
        (kInts - kInts / 2) * sizeof(int));
  CHECK(head.get() == kInts / 2 * sizeof(int));
  CHECK(back == mine);
  CHECK(file.position() == kInts);
  file.close();
}

// read_all that runs past end of file returns this rank's bytes before the
// end (a prefix of its view, different on every rank), leaves the rest of
// its buffer untouched, and still moves the pointer by the amount asked.
TEST_CASE("Api.Collective.ReadAllPastEndOfFile") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_eof");
  const int rank = world_rank(), ranks = world_size();
  constexpr int kBlock = 4;
  // Ends inside some rank's block, so that one rank gets part of a block.
  const std::int64_t file_bytes = static_cast<std::int64_t>(kBlock) * ranks * 5 + 6;
  write_pattern_file(path, file_bytes);
  std::int64_t expected = 0;
  for (std::int64_t i = 0;; ++i) {
    const std::int64_t block_start = (i * ranks + rank) * kBlock;
    if (block_start >= file_bytes) break;
    expected += std::min<std::int64_t>(kBlock, file_bytes - block_start);
  }
  const InterleavedView view(kBlock);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly,
                                         {{"cb_buffer_size", "64"}, {"cb_nodes", "1"}});
  view.apply(file);
  constexpr int kAsked = 100;
  std::vector<char> buffer(kAsked, '#');
  CHECK(file.read_all(buffer.data(), kAsked, MPI_CHAR) == static_cast<std::size_t>(expected));
  for (std::int64_t i = 0; i < expected; ++i) {
    const char wanted = pattern(view.file_offset(i));
    if (buffer[static_cast<std::size_t>(i)] != wanted) {
      FAIL_CHECK("byte " << i << " of the buffer is " << int{buffer[static_cast<std::size_t>(i)]}
                         << ", not " << int{wanted});
      break;
    }
  }
  // As with independent reads (Api.File.ReadPastEndOfFile), the bytes past
  // those read keep what they held.
  CHECK(std::count(buffer.begin() + expected, buffer.end(), '#') == kAsked - expected);
  CHECK(file.position() == kAsked);
  CHECK(file.read_at_all(kAsked, buffer.data(), kAsked, MPI_CHAR) == 0);
  CHECK(file.iread_all(buffer.data(), kAsked, MPI_CHAR).get() == 0);
  CHECK(file.position() == 2 * kAsked);
  file.close();
}

// A storage failure on the aggregators (ENOSPC from /dev/full) reaches
// every rank's Future as an IoError with code no_space, whether or not the
// rank aggregates; the call itself returns at once.
TEST_CASE("Api.Collective.IoErrorReachesEveryRank") {
  const int rank = world_rank(), last = world_size() - 1;
  const std::vector<flowio::Hints> hint_sets = {
      {{"romio_cb_write", "enable"}},
      {{"romio_cb_write", "enable"}, {"cb_nodes", "1"}, {"romio_ds_write", "disable"}},
      {{"romio_cb_write", "enable"},
       {"flowio_aggregators", std::to_string(last)},
       {"cb_nodes", "1"},
       {"cb_buffer_size", "4096"}},
  };
  constexpr std::int64_t kBytes = 1 << 16;
  std::vector<char> data(kBytes, 'x');
  for (const flowio::Hints& hints : hint_sets) {
    const std::string hint_text = describe(hints);
    CAPTURE(hint_text);
    flowio::File full =
        flowio::File::open(MPI_COMM_WORLD, "/dev/full", flowio::Mode::wronly, hints);
    flowio::Future<std::size_t> pending;
    try {
      pending = full.iwrite_at_all(rank * kBytes, data.data(), kBytes, MPI_CHAR);
    } catch (const flowio::Error& error) {
      FAIL_CHECK("iwrite_at_all threw at the call instead of through its Future: "
                 << std::string(error.what()));
    }
    bool right_error = false;
    if (pending.valid()) {
      try {
        flowio::testing::get_within(pending, "iwrite_at_all to /dev/full, hints " + hint_text);
        FAIL_CHECK("a collective write to /dev/full succeeded");
      } catch (const flowio::IoError& error) {
        CHECK(error.code() == flowio::ErrorCode::no_space);
        right_error = error.code() == flowio::ErrorCode::no_space;
      } catch (const flowio::Error& error) {
        FAIL_CHECK("not an IoError: " << std::string(flowio::to_string(error.code())) << ": "
                                      << std::string(error.what()));
      }
    }
    CHECK(all_ranks(right_error));

    // The blocking form throws the same.
    bool blocking_right = false;
    full.seek(rank * kBytes, flowio::Whence::set);
    try {
      full.write_all(data.data(), kBytes, MPI_CHAR);
      FAIL_CHECK("a collective write to /dev/full succeeded");
    } catch (const flowio::IoError& error) {
      CHECK(error.code() == flowio::ErrorCode::no_space);
      blocking_right = error.code() == flowio::ErrorCode::no_space;
    } catch (const flowio::Error& error) {
      FAIL_CHECK("not an IoError: " << std::string(flowio::to_string(error.code())) << ": "
                                    << std::string(error.what()));
    }
    CHECK(all_ranks(blocking_right));
    full.close();
  }
}

// A failure on one rank only, when every rank accesses the file itself
// (direct mode, where a blocking call does its part before the ranks
// exchange their summaries and announces the outcome with them): the last
// rank writes past the largest file this file system allows (EFBIG), and
// every rank's call throws that IoError; then a good call succeeds.
TEST_CASE("Api.Collective.DirectFailureOnOneRankReachesEveryRank") {
  const int rank = world_rank(), last = world_size() - 1;
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_direct_fail");
  constexpr std::int64_t kBytes = 4096;
  std::vector<char> data(kBytes, 'y');
  const MPI_Offset too_far = MPI_Offset{1} << 50;  // ext4 and tmpfs stop far below
  for (const flowio::Hints& hints :
       std::vector<flowio::Hints>{{}, {{"romio_cb_write", "disable"}}}) {
    const std::string hint_text = describe(hints);
    CAPTURE(hint_text);
    flowio::File file = flowio::File::open(
        MPI_COMM_WORLD, path,
        flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close, hints);
    bool right_error = false;
    try {
      file.write_at_all(rank == last ? too_far : rank * kBytes, data.data(), kBytes, MPI_CHAR);
      FAIL_CHECK("a write past the largest file size succeeded");
    } catch (const flowio::IoError& error) {
      CHECK(error.system_errno() == EFBIG);
      right_error = error.system_errno() == EFBIG;
    } catch (const flowio::Error& error) {
      FAIL_CHECK("not an IoError: " << std::string(error.what()));
    }
    CHECK(all_ranks(right_error));
    CHECK(file.write_at_all(rank * kBytes, data.data(), kBytes, MPI_CHAR) ==
          static_cast<std::size_t>(kBytes));
    std::vector<char> back(kBytes, 0);
    CHECK(file.read_at_all(rank * kBytes, back.data(), kBytes, MPI_CHAR) ==
          static_cast<std::size_t>(kBytes));
    CHECK(back == data);
    file.close();
  }
}

// Bad arguments to a collective call throw UsageError at the call on every
// rank, and leave the file usable for the next collective call.
TEST_CASE("Api.Collective.UsageErrorsAtTheCall") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_usage");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close);
  int value = world_rank();
  const auto expect_usage_error = [](auto&& call, flowio::ErrorCode code) {
    try {
      call();
      FAIL_CHECK("accepted");
    } catch (const flowio::UsageError& error) {
      CHECK(error.code() == code);
    }
  };
  expect_usage_error([&] { (void)file.iwrite_at_all(0, &value, -1, MPI_INT); },
                     flowio::ErrorCode::invalid_count);
  expect_usage_error([&] { file.write_all(&value, -1, MPI_INT); },
                     flowio::ErrorCode::invalid_count);
  expect_usage_error([&] { (void)file.iread_all(&value, -3, MPI_INT); },
                     flowio::ErrorCode::invalid_count);
  expect_usage_error([&] { file.read_at_all(-1, &value, 1, MPI_INT); },
                     flowio::ErrorCode::invalid_argument);
  CHECK(file.position() == 0);
  CHECK(file.write_at_all(world_rank(), &value, 1, MPI_INT) == sizeof(int));
  file.close();

  const std::string read_only = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_usage_ro");
  write_pattern_file(read_only, 16);
  flowio::File reader = flowio::File::open(MPI_COMM_WORLD, read_only, flowio::Mode::rdonly);
  expect_usage_error([&] { (void)reader.iwrite_all(&value, 1, MPI_INT); },
                     flowio::ErrorCode::read_only);
  reader.close();
}

// Two collective writes in flight at once, to disjoint offsets, waited for
// in the other order; then a read issued before the write of the same
// bytes completes sees that write (data phases run in call order).
TEST_CASE("Api.Collective.SeveralOperationsInFlight") {
  const std::string path = fresh_path("coll_in_flight");
  const int rank = world_rank();
  constexpr int kBlock = 24;
  constexpr std::int64_t kBytes = 6000;  // per rank and operation
  const InterleavedView view(kBlock);
  std::vector<char> first(kBytes), second(kBytes), third(kBytes);
  for (std::int64_t i = 0; i < kBytes; ++i) {
    const auto at = static_cast<std::size_t>(i);
    first[at] = pattern(view.file_offset(i));
    second[at] = pattern(view.file_offset(kBytes + i));
    third[at] = static_cast<char>(~pattern(view.file_offset(i)));
  }
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"cb_buffer_size", "512"},
                          {"flowio_buffers_in_flight", "2"},
                          {"romio_cb_write", "enable"},
                          {"romio_cb_read", "enable"}});
  view.apply(file);
  flowio::Future<std::size_t> a = file.iwrite_at_all(0, first.data(), kBytes, MPI_CHAR);
  flowio::Future<std::size_t> b = file.iwrite_at_all(kBytes, second.data(), kBytes, MPI_CHAR);
  CHECK(b.get() == static_cast<std::size_t>(kBytes));
  CHECK(a.get() == static_cast<std::size_t>(kBytes));
  std::vector<char> back(2 * kBytes, '#');
  CHECK(file.read_at_all(0, back.data(), 2 * kBytes, MPI_CHAR) ==
        static_cast<std::size_t>(2 * kBytes));
  CHECK(std::equal(first.begin(), first.end(), back.begin()));
  CHECK(std::equal(second.begin(), second.end(), back.begin() + kBytes));

  flowio::Future<std::size_t> overwrite = file.iwrite_at_all(0, third.data(), kBytes, MPI_CHAR);
  std::vector<char> after(kBytes, '#');
  flowio::Future<std::size_t> reread = file.iread_at_all(0, after.data(), kBytes, MPI_CHAR);
  CHECK(reread.get() == static_cast<std::size_t>(kBytes));
  CHECK(overwrite.get() == static_cast<std::size_t>(kBytes));
  CHECK(after == third);
  file.close();
  if (rank == 0) {
    const std::vector<char> contents = read_whole_file(path);
    REQUIRE(contents.size() == static_cast<std::size_t>(2 * kBytes * world_size()));
  }
}

// On a one-process communicator a blocking collective call whose part
// goes direct is made as its independent call (nothing to exchange): it
// moves the data, is recorded as any collective operation (numbered with
// the others, its io stage counting the bytes), and fails as one, through
// the agreement's rules (a failure that is not flowio's own reaches the
// caller as the other processes would report it, naming the stage).
TEST_CASE("Api.Collective.OneProcessCallIsItsIndependentCall") {
  const std::string path = flowio::testing::scratch_path(
      MPI_COMM_SELF, "coll_one_process." + std::to_string(world_rank()));
  constexpr int kBytes = 4096;
  std::vector<char> data(kBytes, static_cast<char>('a' + world_rank()));
  std::vector<char> back(kBytes, '#');
  // The file's second backend write fails.
  const flowio::testing::FaultScope faults("on=write,nth=2,fault=eio");
  flowio::File file =
      flowio::File::open(MPI_COMM_SELF, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close);
  CHECK(file.write_at_all(0, data.data(), kBytes, MPI_CHAR) == kBytes);
  CHECK(file.read_at_all(0, back.data(), kBytes, MPI_CHAR) == kBytes);
  CHECK(back == data);
  CHECK(file.read_at_all(kBytes, back.data(), kBytes, MPI_CHAR) == 0);  // past the end
  CHECK_THROWS_AS(file.write_at_all(0, data.data(), kBytes, MPI_CHAR), flowio::IoError);
  {
    const flowio::testing::FaultScope offsets("on=collective.offsets,fault=bad_alloc");
    try {
      file.write_at_all(0, data.data(), kBytes, MPI_CHAR);
      FAIL("a failure at the offsets stage did not reach the caller");
    } catch (const flowio::Error& error) {
      CHECK(error.code() == flowio::ErrorCode::io);
      CHECK(std::string(error.what()).find("offsets") != std::string::npos);
    }
  }
  CHECK(file.write_at_all(kBytes, data.data(), kBytes, MPI_CHAR) == kBytes);

  const std::vector<flowio::OperationStatistics> all = file.statistics();
  REQUIRE(all.size() == 6);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CAPTURE(i);
    CHECK(all[i].sequence == i);
    CHECK(all[i].bytes == kBytes);
    CHECK(all[i].aggregators == 1);
    CHECK(all[i].seconds >= 0);
    const bool moved = i != 3 && i != 4;
    CHECK(all[i].aggregator == moved);
    CHECK(all[i].iterations == (moved ? 1 : 0));
    CHECK(all[i].method == (moved ? "direct" : ""));
    std::int64_t io_bytes = -1;
    double agree_seconds = -1;
    for (const flowio::StageStatistics& stage : all[i].stages) {
      if (stage.name == "io") io_bytes = stage.bytes;
      if (stage.name == "agree") agree_seconds = stage.seconds;
    }
    CHECK(io_bytes == (i == 2 || !moved ? 0 : kBytes));
    CHECK((agree_seconds > 0) == !moved);
  }
  CHECK(all[0].writing);
  CHECK(!all[1].writing);
  CHECK(all[5].writing);
  file.close();
}
