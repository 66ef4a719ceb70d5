// The C++ API's conveniences through flowio::File, on 1 and 2 ranks: typed
// forms of the data calls (datatype deduced, Transfer results with element
// counts), the shared file pointer and ordered calls, wait_all / when_all
// over file operations, continuations that block on other file
// operations, hints from an MPI_Info, buffers given back when the Future
// is ready, and error messages that name the file.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/future_deadline.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::get_within;
using flowio::testing::world_rank;
using flowio::testing::world_size;

// What a call that must fail with an `Expected` threw (a test failure if it
// did not).
template <typename Expected, typename Call>
Expected error_of(Call call) {
  try {
    call();
  } catch (const Expected& error) {
    return error;
  }
  FAIL("the call did not fail as it should");
  throw std::logic_error("unreachable: FAIL ends the test case");
}

flowio::File open_fresh(const std::string& name, flowio::Mode extra = flowio::Mode::rdwr) {
  return flowio::File::open(MPI_COMM_WORLD, flowio::testing::fresh_path(name),
                            flowio::Mode::create | extra);
}

// This rank's `n` values, distinct from every other rank's.
template <typename T>
std::vector<T> values_of_rank(int n) {
  std::vector<T> values(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    values[static_cast<std::size_t>(i)] = static_cast<T>(world_rank() * 1000 + i);
  return values;
}

}  // namespace

// The independent typed forms write and read spans and vectors with the
// datatype deduced, and report elements as well as bytes.
TEST_CASE("Api.Typed.IndependentForms") {
  flowio::File file = open_fresh("typed_independent");
  file.set_view(0, MPI_DOUBLE, MPI_DOUBLE);  // offsets count doubles
  constexpr int kPerRank = 96;
  const std::vector<double> mine = values_of_rank<double>(kPerRank);
  const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) * kPerRank * 4;
  const std::span<const double> half(mine.data(), kPerRank / 2);

  const flowio::Transfer written = file.write_at(at, half);
  CHECK(written.bytes() == kPerRank / 2 * sizeof(double));
  CHECK(written.elements() == kPerRank / 2);
  CHECK(written.count() == kPerRank / 2);
  CHECK(written.datatype() == MPI_DOUBLE);
  flowio::Future<flowio::Transfer> second =
      file.iwrite_at(at + kPerRank / 2, std::span<const double>(mine).subspan(kPerRank / 2));
  CHECK(get_within(second, "iwrite_at of a span").elements() == kPerRank / 2);

  std::vector<double> back(kPerRank, -1.0);
  CHECK(file.read_at(at, back).elements() == kPerRank);
  CHECK(back == mine);
  std::fill(back.begin(), back.end(), -1.0);
  flowio::Future<flowio::Transfer> reading = file.iread_at(at, std::span<double>(back));
  CHECK(get_within(reading, "iread_at into a span").bytes() == kPerRank * sizeof(double));
  CHECK(back == mine);

  // At the individual file pointer.
  file.seek(at + kPerRank, flowio::Whence::set);
  CHECK(file.write(mine).elements() == kPerRank);
  flowio::Future<flowio::Transfer> pointer_write = file.iwrite(mine);
  CHECK(get_within(pointer_write, "iwrite of a vector").elements() == kPerRank);
  file.seek(at + kPerRank, flowio::Whence::set);
  std::array<double, kPerRank> first{};
  CHECK(file.read(first).elements() == kPerRank);
  CHECK(std::equal(first.begin(), first.end(), mine.begin()));
  std::vector<double> again(kPerRank);
  flowio::Future<flowio::Transfer> pointer_read = file.iread(again);
  CHECK(get_within(pointer_read, "iread into a vector").elements() == kPerRank);
  CHECK(again == mine);
  file.close();
}

// The collective typed forms, with complex and integer elements.
TEST_CASE("Api.Typed.CollectiveForms") {
  flowio::File file = open_fresh("typed_collective");
  constexpr int kPerRank = 64;
  const int rank = world_rank();
  std::vector<std::complex<float>> waves(kPerRank);
  for (int i = 0; i < kPerRank; ++i) waves[static_cast<std::size_t>(i)] = {float(rank), float(i)};
  const MPI_Offset complex_at =
      static_cast<MPI_Offset>(rank) * kPerRank * sizeof(std::complex<float>);
  CHECK(file.write_at_all(complex_at, waves).elements() == kPerRank);
  std::vector<std::complex<float>> waves_back(kPerRank);
  flowio::Future<flowio::Transfer> read_waves = file.iread_at_all(complex_at, waves_back);
  const flowio::Transfer waves_read = get_within(read_waves, "iread_at_all of complex");
  CHECK(waves_read.datatype() == MPI_CXX_FLOAT_COMPLEX);
  CHECK(waves_read.elements() == kPerRank);
  CHECK(waves_back == waves);

  // Integers after the complex numbers, through the individual pointer.
  const std::vector<std::int32_t> counts = values_of_rank<std::int32_t>(kPerRank);
  const MPI_Offset ints_from =
      static_cast<MPI_Offset>(world_size()) * kPerRank * sizeof(std::complex<float>);
  file.set_view(ints_from, MPI_INT32_T, MPI_INT32_T);
  file.seek(static_cast<MPI_Offset>(rank) * kPerRank * 2, flowio::Whence::set);
  flowio::Future<flowio::Transfer> first = file.iwrite_all(std::span<const std::int32_t>(counts));
  CHECK(get_within(first, "iwrite_all of ints").elements() == kPerRank);
  CHECK(file.write_all(counts).elements() == kPerRank);
  flowio::Future<flowio::Transfer> at_offset =
      file.iwrite_at_all(static_cast<MPI_Offset>(rank) * kPerRank * 2, counts);
  CHECK(get_within(at_offset, "iwrite_at_all of ints").bytes() == kPerRank * 4);
  std::vector<std::int32_t> both(2 * kPerRank);
  CHECK(file.read_at_all(static_cast<MPI_Offset>(rank) * kPerRank * 2, both).elements() ==
        2 * kPerRank);
  CHECK(std::equal(counts.begin(), counts.end(), both.begin()));
  CHECK(std::equal(counts.begin(), counts.end(), both.begin() + kPerRank));
  file.seek(static_cast<MPI_Offset>(rank) * kPerRank * 2, flowio::Whence::set);
  std::vector<std::int32_t> through_pointer(kPerRank);
  CHECK(file.read_all(through_pointer).elements() == kPerRank);
  flowio::Future<flowio::Transfer> next = file.iread_all(std::span<std::int32_t>(through_pointer));
  CHECK(get_within(next, "iread_all of ints").elements() == kPerRank);
  CHECK(through_pointer == counts);
  file.close();
}

// A read that meets the end of the file inside a copy of a derived type:
// Transfer says what MPI_Get_count (undefined) and MPI_Get_elements (the
// predefined elements read) would.
TEST_CASE("Api.Typed.ShortReadCountsElements") {
  MPI_Datatype pair = MPI_DATATYPE_NULL;  // {double, int32}: 12 bytes of data
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT32_T};
  MPI_Type_create_struct(2, lengths, displacements, types, &pair);
  MPI_Type_commit(&pair);
  flowio::File file = open_fresh("typed_short_read");
  const std::string path = file.path();
  if (world_rank() == 0) {
    const std::vector<double> data(4, 2.5);
    file.write_at(0, data.data(), 3, MPI_DOUBLE);  // 3 x 8 bytes: 2 pairs
  }
  file.sync();
  struct Pair {
    double value;
    std::int32_t tag;
  };
  std::vector<Pair> pairs(4);
  const flowio::Transfer got(file.read_at(0, pairs.data(), 4, pair), pair);
  CHECK(got.bytes() == 24);
  CHECK(got.count() == 2);
  CHECK(got.elements() == 4);
  const flowio::Transfer ragged(file.read_at(4, pairs.data(), 4, pair), pair);  // 20 bytes
  CHECK(ragged.count() == MPI_UNDEFINED);
  CHECK(ragged.elements() == 3);
  file.close();
  MPI_Type_free(&pair);
}

// wait_all over collective writes returns every byte count in order; over
// independent writes of which one fails, it reports that failure only
// once every write has completed.
TEST_CASE("Api.WhenAll.OverFileOperations") {
  flowio::File file = open_fresh("when_all_writes");
  constexpr int kPerRank = 1 << 14;
  const std::vector<double> data = values_of_rank<double>(kPerRank);
  const MPI_Offset block = static_cast<MPI_Offset>(kPerRank) * sizeof(double);
  std::vector<flowio::Future<flowio::Transfer>> writes;
  for (int step = 0; step < 3; ++step) {
    const MPI_Offset at = (static_cast<MPI_Offset>(step) * world_size() + world_rank()) * block;
    writes.push_back(file.iwrite_at_all(at, data));
  }
  const std::vector<flowio::Transfer> written = flowio::wait_all(std::move(writes));
  REQUIRE(written.size() == 3);
  for (const flowio::Transfer& one : written) CHECK(one.elements() == kPerRank);

  flowio::File full = flowio::File::open(MPI_COMM_SELF, "/dev/full", flowio::Mode::wronly);
  std::vector<flowio::Future<std::size_t>> mixed;
  const std::vector<char> bytes(1 << 17, 'x');
  mixed.push_back(file.iwrite_at(world_rank() * 100, bytes.data(), 100, MPI_CHAR));
  mixed.push_back(full.iwrite_at(0, bytes.data(), static_cast<MPI_Count>(bytes.size()), MPI_CHAR));
  mixed.push_back(file.iwrite_at(3 * world_size() * block, bytes.data(),
                                 static_cast<MPI_Count>(bytes.size()), MPI_CHAR));
  flowio::Future<std::vector<std::size_t>> all = flowio::when_all(std::move(mixed));
  try {
    get_within(all, "when_all of writes");
    FAIL("when_all over a write to /dev/full succeeded");
  } catch (const flowio::IoError& error) {
    CHECK(error.code() == flowio::ErrorCode::no_space);
  }
  full.close();
  file.close();
}

// A continuation of a collective write that blocks on another collective
// operation's future completes: continuations run on the continuation
// pool, not on the threads that carry the operations.
TEST_CASE("Api.Continuation.BlocksOnAnotherOperation") {
  flowio::File file = open_fresh("continuation_blocks");
  constexpr int kPerRank = 1 << 16;
  const std::vector<double> data = values_of_rank<double>(kPerRank);
  const MPI_Offset block = static_cast<MPI_Offset>(kPerRank) * sizeof(double);
  flowio::Future<flowio::Transfer> first = file.iwrite_at_all(world_rank() * block, data);
  flowio::Future<flowio::Transfer> second =
      file.iwrite_at_all((world_size() + world_rank()) * block, data);
  flowio::Future<std::size_t> both = first.then([&second](flowio::Future<flowio::Transfer> done) {
    return done.get().bytes() + second.get().bytes();
  });
  CHECK(get_within(both, "a continuation waiting for a second write") ==
        static_cast<std::size_t>(2 * block));
  file.close();
}

// Independent shared-pointer calls of every rank take consecutive places
// that never overlap, and the pointer ends past all of them.
TEST_CASE("Api.SharedPointer.IndependentCallsTakeConsecutivePlaces") {
  flowio::File file = open_fresh("shared_independent");
  constexpr int kPerCall = 100;
  constexpr int kCalls = 3;
  for (int call = 0; call < kCalls; ++call) {
    const std::vector<std::int32_t> record(kPerCall, world_rank() * 10 + call);
    if (call == 1) {
      flowio::Future<flowio::Transfer> written = file.iwrite_shared(record);
      CHECK(get_within(written, "iwrite_shared").elements() == kPerCall);
    } else {
      CHECK(file.write_shared(record).elements() == kPerCall);
    }
  }
  file.sync();
  const MPI_Offset bytes = MPI_Offset{kCalls} * kPerCall * 4 * world_size();
  CHECK(file.position_shared() == bytes);
  // Each record is whole where it landed, and each one landed once.
  std::vector<std::int32_t> all(static_cast<std::size_t>(bytes / 4));
  CHECK(file.read_at(0, all).bytes() == static_cast<std::size_t>(bytes));
  std::set<std::int32_t> records;
  for (std::size_t at = 0; at < all.size(); at += kPerCall) {
    CHECK(std::all_of(all.begin() + static_cast<std::ptrdiff_t>(at),
                      all.begin() + static_cast<std::ptrdiff_t>(at + kPerCall),
                      [&](std::int32_t value) { return value == all[at]; }));
    records.insert(all[at]);
  }
  CHECK(records.size() == static_cast<std::size_t>(kCalls * world_size()));
  file.close();
}

// Ordered calls put the ranks' data one after another in rank order from
// the shared pointer; seek_shared moves it, set_view resets it, and bad
// arguments on one rank fail the call on every rank, the pointer unmoved.
TEST_CASE("Api.SharedPointer.OrderedCallsFollowRankOrder") {
  flowio::File file = open_fresh("shared_ordered");
  const int rank = world_rank();
  const int ranks = world_size();
  const std::vector<double> first(static_cast<std::size_t>(rank + 1), rank);
  const std::vector<double> second(static_cast<std::size_t>(rank + 1), 100 + rank);
  const MPI_Offset round_bytes = MPI_Offset{ranks} * (ranks + 1) / 2 * 8;
  CHECK(file.write_ordered(first).elements() == rank + 1);
  flowio::Future<flowio::Transfer> later = file.iwrite_ordered(second);
  CHECK(get_within(later, "iwrite_ordered").elements() == rank + 1);
  CHECK(file.position_shared() == 2 * round_bytes);
  file.sync();
  // Rank r's data start after ranks 0 .. r-1's: r (r + 1) / 2 doubles.
  std::vector<double> mine(static_cast<std::size_t>(rank + 1));
  const MPI_Offset before_me = MPI_Offset{rank} * (rank + 1) / 2 * 8;
  file.read_at(before_me, mine);
  CHECK(mine == first);
  file.read_at(round_bytes + before_me, mine);
  CHECK(mine == second);

  file.seek_shared(0, flowio::Whence::set);
  CHECK(file.position_shared() == 0);
  std::vector<double> back(static_cast<std::size_t>(rank + 1));
  CHECK(file.read_ordered(back).elements() == rank + 1);
  CHECK(back == first);
  file.seek_shared(0, flowio::Whence::end);
  CHECK(file.position_shared() == 2 * round_bytes);

  // In etypes of the new view, from 0 again.
  file.set_view(0, MPI_DOUBLE, MPI_DOUBLE);
  CHECK(file.position_shared() == 0);
  file.seek_shared(round_bytes / 8, flowio::Whence::current);
  flowio::Future<flowio::Transfer> reading = file.iread_ordered(back);
  CHECK(get_within(reading, "iread_ordered").elements() == rank + 1);
  CHECK(back == second);

  // Four bytes are no whole double: the last rank's arguments are bad.
  const MPI_Offset unmoved = file.position_shared();
  const std::int32_t odd = 7;
  const flowio::UsageError refused = error_of<flowio::UsageError>([&] {
    if (rank == ranks - 1) {
      file.write_ordered(&odd, 1, MPI_INT32_T);
    } else {
      file.write_ordered(first.data(), 1, MPI_DOUBLE);
    }
  });
  CHECK(refused.code() == flowio::ErrorCode::invalid_datatype);
  CHECK(file.position_shared() == unmoved);
  file.close();
}

// With Mode::append both file pointers start at the end of the file.
TEST_CASE("Api.SharedPointer.AppendStartsAtTheEnd") {
  const std::string path = flowio::testing::fresh_path("shared_append");
  {
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly);
    if (world_rank() == 0) file.write_at(0, std::vector<std::int64_t>(8, 1));
    file.close();
  }
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::wronly | flowio::Mode::append);
  CHECK(file.position() == 64);
  CHECK(file.position_shared() == 64);
  file.close();
}

// Hints an MPI-IO program keeps in an MPI_Info open a File, and the hints
// in force go back into one.
TEST_CASE("Api.Info.OpenWithHintsFromAnInfo") {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_nodes", "1");
  MPI_Info_set(info, "flowio_buffers_in_flight", "2");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, flowio::testing::fresh_path("info_hints"),
                         flowio::Mode::create | flowio::Mode::rdwr, flowio::hints_from_info(info));
  MPI_Info_free(&info);
  const flowio::Hints used = file.hints();
  CHECK(used.at("cb_nodes") == "1");
  CHECK(used.at("flowio_buffers_in_flight") == "2");
  const flowio::Info back(used);
  CHECK(flowio::hints_from_info(back.get()) == used);
  file.close();
}

// Once a nonblocking call's Future is ready the call is done with its
// buffer: a write's buffer may be overwritten at once and the file keeps
// what was written; a read's holds the data. Large enough to run on
// flowio's threads, not at the call.
TEST_CASE("Api.Buffers.GivenBackWhenReady") {
  flowio::File file = open_fresh("buffers_given_back");
  constexpr int kPerRank = 1 << 18;  // 2 MiB of doubles
  const MPI_Offset block = MPI_Offset{kPerRank} * 8;
  std::vector<double> data = values_of_rank<double>(kPerRank);
  flowio::Future<flowio::Transfer> collective = file.iwrite_at_all(world_rank() * block, data);
  get_within(collective, "iwrite_at_all");
  std::fill(data.begin(), data.end(), -1.0);
  data = values_of_rank<double>(kPerRank);
  flowio::Future<flowio::Transfer> independent =
      file.iwrite_at((world_size() + world_rank()) * block, data);
  get_within(independent, "iwrite_at");
  std::fill(data.begin(), data.end(), -2.0);
  file.sync();

  const std::vector<double> expected = values_of_rank<double>(kPerRank);
  std::vector<double> back(kPerRank);
  flowio::Future<flowio::Transfer> reading = file.iread_at_all(world_rank() * block, back);
  get_within(reading, "iread_at_all");
  CHECK(back == expected);
  flowio::Future<flowio::Transfer> reading_again =
      file.iread_at((world_size() + world_rank()) * block, back);
  get_within(reading_again, "iread_at");
  CHECK(back == expected);
  file.close();
}

// Error messages name the file: an open in a directory that does not
// exist, and writes to a full device (/dev/full fails every write with
// ENOSPC), independent and collective (two-phase: the aggregator's message
// reaches every rank).
TEST_CASE("Api.Errors.MessagesNameTheFile") {
  const std::string missing =
      flowio::testing::scratch_path(MPI_COMM_WORLD, "no_such_directory") + "/file.dat";
  const flowio::IoError not_opened = error_of<flowio::IoError>([&] {
    flowio::File::open(MPI_COMM_WORLD, missing, flowio::Mode::create | flowio::Mode::rdwr);
  });
  CHECK(not_opened.code() == flowio::ErrorCode::no_such_file);
  CHECK(std::string(not_opened.what()).find(missing) != std::string::npos);

  const std::vector<char> bytes(1 << 17, 'x');
  flowio::File alone = flowio::File::open(MPI_COMM_SELF, "/dev/full", flowio::Mode::wronly);
  const flowio::IoError independent = error_of<flowio::IoError>([&] { alone.write_at(0, bytes); });
  CHECK(independent.code() == flowio::ErrorCode::no_space);
  CHECK(std::string(independent.what()).find("/dev/full") != std::string::npos);
  alone.close();

  flowio::File together = flowio::File::open(MPI_COMM_WORLD, "/dev/full", flowio::Mode::wronly,
                                             {{"romio_cb_write", "enable"}});
  flowio::Future<flowio::Transfer> written =
      together.iwrite_at_all(world_rank() * static_cast<MPI_Offset>(bytes.size()), bytes);
  const flowio::IoError collective =
      error_of<flowio::IoError>([&] { get_within(written, "iwrite_at_all to /dev/full"); });
  CHECK(collective.code() == flowio::ErrorCode::no_space);
  CHECK(std::string(collective.what()).find("/dev/full") != std::string::npos);
  together.close();
}
