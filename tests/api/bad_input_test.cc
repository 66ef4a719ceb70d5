// The bad-input matrix through the C++ API on 1, 2 and 4 ranks: every bad
// argument of an independent call gets a typed error at the call on the
// rank that made it; a bad argument of a collective call that moves no
// data (open, set_view, set_hints, set_size, preallocate), on every rank
// or on one, fails the call on every rank with the same code and changes
// nothing; the file stays usable. Collective data calls with bad arguments
// on every rank fail at the call everywhere; with bad arguments on one
// rank only they wait for the collective engine (bad_collective_test.cc).
// Each case prints a "flowio-outcome:" line for the closing table.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/rank_outcomes.h"
#include "tests/support/world.h"

namespace {

using flowio::ErrorCode;
using namespace flowio::testing;

flowio::File open_scratch(const std::string& name, const flowio::Hints& hints = {}) {
  return flowio::File::open(MPI_COMM_WORLD, fresh_path(name),
                            flowio::Mode::create | flowio::Mode::rdwr, hints);
}

// Runs `call` on this rank, gathers every rank's outcome, prints the line,
// and checks that the ranks in `failing` (all when empty) failed with
// `expected` and the others succeeded.
void expect_outcomes(const std::string& test_case, const std::string& input,
                     const std::function<std::size_t()>& call, ErrorCode expected,
                     std::vector<int> failing = {}) {
  const std::vector<Outcome> all = gather_outcomes(observe(call));
  print_outcomes(test_case, input, all);
  if (failing.empty()) {
    for (int rank = 0; rank < world_size(); ++rank) failing.push_back(rank);
  }
  for (int rank = 0; rank < world_size(); ++rank) {
    CAPTURE(test_case);
    CAPTURE(input);
    CAPTURE(rank);
    const bool should_fail = std::find(failing.begin(), failing.end(), rank) != failing.end();
    if (should_fail) {
      CHECK_MESSAGE(all[rank].failed_with(expected), flowio::testing::describe(all[rank]));
    } else {
      CHECK_MESSAGE(all[rank].ok(), flowio::testing::describe(all[rank]));
    }
  }
}

// This rank writes 4 ints at its own place and reads them back: the file
// still works.
void check_usable(flowio::File& file) {
  const int mine[4] = {world_rank(), 1, 2, 3};
  const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) * sizeof mine;
  CHECK(file.write_at(at, mine, 4, MPI_INT) == sizeof mine);
  int back[4] = {-1, -1, -1, -1};
  CHECK(file.read_at(at, back, 4, MPI_INT) == sizeof back);
  CHECK(std::equal(mine, mine + 4, back));
}

}  // namespace

// Null buffers, counts and datatypes an independent call cannot use.
TEST_CASE("Api.BadInput.IndependentArguments") {
  flowio::File file = open_scratch("bad_independent");
  int data[8] = {0};
  auto independent = [&](const char* input, ErrorCode expected, auto call) {
    expect_outcomes("independent call", input, call, expected);
  };
  independent("write_at: null buffer, count 4 MPI_INT", ErrorCode::invalid_buffer,
              [&] { return file.write_at(0, nullptr, 4, MPI_INT); });
  independent("read_at: null buffer, count 4 MPI_INT", ErrorCode::invalid_buffer,
              [&] { return file.read_at(0, nullptr, 4, MPI_INT); });
  independent("iwrite_at: null buffer, count 4 MPI_INT", ErrorCode::invalid_buffer,
              [&] { return file.iwrite_at(0, nullptr, 4, MPI_INT).get(); });
  independent("write_at: count -1", ErrorCode::invalid_count,
              [&] { return file.write_at(0, data, -1, MPI_INT); });
  independent("iread: count -5", ErrorCode::invalid_count,
              [&] { return file.iread(data, -5, MPI_INT).get(); });
  independent("write_at: count 2^62 MPI_INT (count * size overflows)", ErrorCode::invalid_count,
              [&] { return file.write_at(0, data, MPI_Count{1} << 62, MPI_INT); });
  MPI_Datatype huge_extent;
  MPI_Type_create_resized(MPI_INT, 0, MPI_Aint{1} << 40, &huge_extent);
  MPI_Type_commit(&huge_extent);
  independent("read_at: count 2^24 of a type of extent 2^40 (span overflows)",
              ErrorCode::invalid_count,
              [&] { return file.read_at(0, data, MPI_Count{1} << 24, huge_extent); });
  MPI_Type_free(&huge_extent);
  independent("write_at: offset -1", ErrorCode::invalid_argument,
              [&] { return file.write_at(-1, data, 1, MPI_INT); });
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  independent("write_at: uncommitted datatype", ErrorCode::invalid_datatype,
              [&] { return file.write_at(0, data, 1, uncommitted); });
  MPI_Type_free(&uncommitted);
  MPI_Datatype freed;
  MPI_Type_contiguous(2, MPI_INT, &freed);
  MPI_Type_commit(&freed);
  const MPI_Datatype stale = freed;
  MPI_Type_free(&freed);
  independent("read_at: freed datatype", ErrorCode::invalid_datatype,
              [&] { return file.read_at(0, data, 1, stale); });
  independent("write_at: MPI_DATATYPE_NULL", ErrorCode::invalid_datatype,
              [&] { return file.write_at(0, data, 1, MPI_DATATYPE_NULL); });
  check_usable(file);
  file.close();
}

// A null buffer is MPI_BOTTOM, valid with a datatype of absolute
// addresses: it writes and reads the memory those addresses name.
TEST_CASE("Api.BadInput.NullBufferWithAbsoluteAddressesIsValid") {
  flowio::File file = open_scratch("bad_bottom");
  int values[4] = {world_rank(), 11, 22, 33};
  MPI_Aint address = 0;
  MPI_Get_address(values, &address);
  MPI_Datatype absolute;
  const int length = 4;
  MPI_Type_create_hindexed(1, &length, &address, MPI_INT, &absolute);
  MPI_Type_commit(&absolute);
  const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) * sizeof values;
  CHECK(file.write_at(at, MPI_BOTTOM, 1, absolute) == sizeof values);
  const int written[4] = {values[0], values[1], values[2], values[3]};
  std::fill(values, values + 4, -1);
  CHECK(file.read_at(at, MPI_BOTTOM, 1, absolute) == sizeof values);
  CHECK(std::equal(values, values + 4, written));
  MPI_Type_free(&absolute);
  file.close();
}

// Access modes, the etype, end of file, and a displacement that is no
// multiple of the etype (valid: MPI counts it in bytes).
TEST_CASE("Api.BadInput.ModesEtypesAndEndOfFile") {
  const std::string path = fresh_path("bad_modes");
  int data[4] = {1, 2, 3, 4};
  {
    flowio::File writer =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::wronly);
    expect_outcomes(
        "independent call", "read_at on a write-only file",
        [&] { return writer.read_at(0, data, 1, MPI_INT); }, ErrorCode::access_denied);
    writer.close();
  }
  flowio::File reader = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly);
  expect_outcomes(
      "independent call", "write_at on a read-only file",
      [&] { return reader.write_at(0, data, 1, MPI_INT); }, ErrorCode::read_only);
  expect_outcomes(
      "collective call, every rank", "write_at_all on a read-only file",
      [&] { return reader.write_at_all(0, data, 1, MPI_INT); }, ErrorCode::read_only);
  expect_outcomes(
      "collective call, every rank", "set_size on a read-only file",
      [&] { return reader.set_size(0), std::size_t{0}; }, ErrorCode::read_only);
  reader.close();

  flowio::File file = open_scratch("bad_etype");
  file.set_view(0, MPI_INT, MPI_INT);
  char bytes[6] = {0};
  expect_outcomes(
      "independent call", "write_at of 3 bytes with etype MPI_INT",
      [&] { return file.write_at(0, bytes, 3, MPI_BYTE); }, ErrorCode::invalid_datatype);
  expect_outcomes(
      "collective call, every rank", "read_at_all of 6 bytes with etype MPI_INT",
      [&] { return file.read_at_all(0, bytes, 6, MPI_BYTE); }, ErrorCode::invalid_datatype);
  // Reading past the end is a short count, not an error.
  const Outcome past_end = observe([&] { return file.read_at(1000, data, 4, MPI_INT); });
  CHECK(past_end.ok());
  CHECK(past_end.moved == 0);
  file.set_view(3, MPI_INT, MPI_INT);
  const int value = 0x01020304 + world_rank();
  CHECK(file.write_at_all(world_rank(), &value, 1, MPI_INT) == sizeof value);
  int back = 0;
  CHECK(file.read_at(world_rank(), &back, 1, MPI_INT) == sizeof back);
  CHECK(back == value);
  file.set_view(0, MPI_BYTE, MPI_BYTE);
  char raw[4] = {0};
  CHECK(file.read_at(3 + 4 * world_rank(), raw, 4, MPI_BYTE) == 4);
  int raw_value = 0;
  std::memcpy(&raw_value, raw, sizeof raw_value);
  CHECK(raw_value == value);
  file.close();
}

// Every call on a closed file, and closing twice, is file_closed.
TEST_CASE("Api.BadInput.UseAfterClose") {
  flowio::File file = open_scratch("bad_closed");
  file.close();
  int data = 0;
  const std::vector<std::pair<const char*, std::function<std::size_t()>>> calls = {
      {"write_at", [&] { return file.write_at(0, &data, 1, MPI_INT); }},
      {"iread_at", [&] { return file.iread_at(0, &data, 1, MPI_INT).get(); }},
      {"write_all", [&] { return file.write_all(&data, 1, MPI_INT); }},
      {"set_view", [&] { return file.set_view(0, MPI_INT, MPI_INT), std::size_t{0}; }},
      {"sync", [&] { return file.sync(), std::size_t{0}; }},
      {"size", [&] { return static_cast<std::size_t>(file.size()); }},
      {"close (twice)", [&] { return file.close(), std::size_t{0}; }},
  };
  for (const auto& [name, call] : calls) {
    expect_outcomes("use after close", name, call, ErrorCode::file_closed);
  }
}

// Views MPI forbids, on every rank: set_view fails everywhere, and the
// previous view stays.
TEST_CASE("Api.BadInput.ForbiddenViews") {
  flowio::File file = open_scratch("bad_views");
  const int lengths[2] = {2, 2};
  const MPI_Aint overlapping_offsets[2] = {0, 4};
  const MPI_Aint decreasing_offsets[2] = {16, 0};
  const MPI_Aint negative_offsets[2] = {-8, 8};
  MPI_Datatype overlapping, decreasing, negative, uncommitted;
  MPI_Type_create_hindexed(2, lengths, overlapping_offsets, MPI_INT, &overlapping);
  MPI_Type_create_hindexed(2, lengths, decreasing_offsets, MPI_INT, &decreasing);
  MPI_Type_create_hindexed(2, lengths, negative_offsets, MPI_INT, &negative);
  MPI_Type_contiguous(4, MPI_INT, &uncommitted);
  for (MPI_Datatype* type : {&overlapping, &decreasing, &negative}) MPI_Type_commit(type);
  const std::vector<std::pair<const char*, MPI_Datatype>> filetypes = {
      {"set_view: overlapping filetype", overlapping},
      {"set_view: decreasing filetype", decreasing},
      {"set_view: filetype with a negative displacement", negative},
      {"set_view: uncommitted filetype", uncommitted},
  };
  for (const auto& [input, filetype] : filetypes) {
    expect_outcomes(
        "collective call, every rank", input,
        [&] { return file.set_view(0, MPI_INT, filetype), std::size_t{0}; },
        ErrorCode::invalid_datatype);
  }
  expect_outcomes(
      "collective call, every rank", "set_view: filetype of 6 bytes, etype MPI_INT",
      [&] {
        MPI_Datatype six;
        MPI_Type_contiguous(6, MPI_BYTE, &six);
        MPI_Type_commit(&six);
        try {
          file.set_view(0, MPI_INT, six);
        } catch (...) {
          MPI_Type_free(&six);
          throw;
        }
        MPI_Type_free(&six);
        return std::size_t{0};
      },
      ErrorCode::invalid_datatype);
  for (MPI_Datatype* type : {&overlapping, &decreasing, &negative, &uncommitted}) {
    MPI_Type_free(type);
  }
  check_usable(file);
  file.close();
}

// A bad argument of a collective call that moves no data, on one rank
// only (the last): every rank fails with the same code, nothing changes,
// and the file goes on working.
TEST_CASE("Api.BadInput.OneRankBadInNonDataCollectives") {
  const int last = world_size() - 1;
  const bool bad = world_rank() == last;
  const std::string one_rank = "collective call, bad on the last rank only";
  flowio::File file = open_scratch("bad_one_rank");
  check_usable(file);
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  expect_outcomes(
      one_rank, "set_view: uncommitted filetype",
      [&] { return file.set_view(0, MPI_INT, bad ? uncommitted : MPI_INT), std::size_t{0}; },
      ErrorCode::invalid_datatype);
  MPI_Type_free(&uncommitted);
  expect_outcomes(
      one_rank, "set_size: -1", [&] { return file.set_size(bad ? -1 : 100), std::size_t{0}; },
      ErrorCode::invalid_argument);
  CHECK(file.size() >= 16);  // nothing was cut
  expect_outcomes(
      one_rank, "preallocate: -1", [&] { return file.preallocate(bad ? -1 : 100), std::size_t{0}; },
      ErrorCode::invalid_argument);
  if (world_size() > 1) {
    expect_outcomes(
        one_rank, "set_size: a different size",
        [&] { return file.set_size(bad ? 50 : 100), std::size_t{0}; }, ErrorCode::not_same);
    expect_outcomes(
        one_rank, "set_view: a different etype size",
        [&] {
          return file.set_view(0, bad ? MPI_DOUBLE : MPI_INT, bad ? MPI_DOUBLE : MPI_INT),
                 std::size_t{0};
        },
        ErrorCode::not_same);
    file.set_view(0, MPI_BYTE, MPI_BYTE);
  }
  expect_outcomes(
      one_rank, "set_hints: cb_buffer_size=-5",
      [&] {
        return file.set_hints({{"cb_buffer_size", bad ? "-5" : "65536"}}), std::size_t{0};
      },
      ErrorCode::invalid_hint);
  CHECK(file.hints().at("cb_buffer_size") == std::to_string(16 << 20));
  check_usable(file);
  file.close();

  const std::string path = fresh_path("bad_one_rank_open");
  expect_outcomes(
      one_rank, "open: rdonly|wronly",
      [&] {
        const flowio::Mode mode = bad ? flowio::Mode::rdonly | flowio::Mode::wronly
                                      : flowio::Mode::create | flowio::Mode::rdwr;
        flowio::File::open(MPI_COMM_WORLD, path, mode).close();
        return std::size_t{0};
      },
      ErrorCode::invalid_access_mode);
  if (world_size() > 1) {
    expect_outcomes(
        one_rank, "open: a different (valid) access mode",
        [&] {
          const flowio::Mode mode = bad ? flowio::Mode::create | flowio::Mode::wronly
                                        : flowio::Mode::create | flowio::Mode::rdwr;
          flowio::File::open(MPI_COMM_WORLD, path, mode).close();
          return std::size_t{0};
        },
        ErrorCode::not_same);
  }
  expect_outcomes(
      one_rank, "open: cb_nodes=abc",
      [&] {
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                           {{"cb_nodes", bad ? "abc" : "1"}})
            .close();
        return std::size_t{0};
      },
      ErrorCode::invalid_hint);
}

// Hint values flowio knows the key of but cannot use fail the call that
// gives them (open, set_view, set_hints) on every rank; unknown keys are
// ignored.
TEST_CASE("Api.BadInput.NonsenseHints") {
  const std::string path = fresh_path("bad_hints");
  const std::vector<flowio::Hints> nonsense = {
      {{"cb_buffer_size", "-5"}},
      {{"cb_buffer_size", "abc"}},
      {{"cb_buffer_size", "99999999999999999999"}},
      {{"cb_buffer_size", "0"}},
      {{"cb_nodes", "-1"}},
      {{"cb_nodes", "12abc"}},
      {{"flowio_buffers_in_flight", "99999999999"}},
      {{"flowio_aggregators", "0,,1"}},
      {{"flowio_aggregators", "100000"}},
      {{"striping_unit", "-1"}},
      {{"romio_cb_fr_alignment", "99999999999999999"}},
      {{"flowio_direct_threshold", "1e9"}},
      {{"romio_cb_write", "maybe"}},
      {{"romio_ds_read", "7"}},
      {{"flowio_realm_policy", "random"}},
      {{"flowio_realm_policy", "datatype"}},
      {{"flowio_realm_stripe", "0"}},
      {{"romio_cb_fr_type", "stripes"}},
      {{"flowio_exchange", "carrier_pigeon"}},
      {{"flowio_io_backend", "floppy"}},
      {{"flowio_direct_io", "sometimes"}},
  };
  for (const flowio::Hints& hints : nonsense) {
    const std::string input = "open: " + hints.begin()->first + "=" + hints.begin()->second;
    expect_outcomes(
        "collective call, every rank", input,
        [&] {
          flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints)
              .close();
          return std::size_t{0};
        },
        ErrorCode::invalid_hint);
  }
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"no_such_hint", "whatever"}, {"cb_nodes", "1"}});
  CHECK(file.hints().count("no_such_hint") == 0);
  expect_outcomes(
      "collective call, every rank", "set_view: cb_nodes=0",
      [&] {
        return file.set_view(0, MPI_BYTE, MPI_BYTE, {{"cb_nodes", "0"}}), std::size_t{0};
      },
      ErrorCode::invalid_hint);
  expect_outcomes(
      "collective call, every rank", "set_hints: flowio_ds_threshold=-1",
      [&] {
        return file.set_hints({{"flowio_ds_threshold", "-1"}}), std::size_t{0};
      },
      ErrorCode::invalid_hint);
  CHECK(file.hints().at("cb_nodes") == "1");
  check_usable(file);
  file.close();
}

// A collective data call with bad arguments on every rank fails at the
// call on every rank, blocking or not, and the next one works.
TEST_CASE("Api.BadInput.CollectiveDataCallsBadEverywhere") {
  flowio::File file = open_scratch("bad_collective_everywhere");
  int data[4] = {0};
  const std::string every = "collective call, every rank";
  expect_outcomes(
      every, "write_at_all: count -1", [&] { return file.write_at_all(0, data, -1, MPI_INT); },
      ErrorCode::invalid_count);
  expect_outcomes(
      every, "iread_at_all: null buffer, count 4",
      [&] { return file.iread_at_all(0, nullptr, 4, MPI_INT).get(); }, ErrorCode::invalid_buffer);
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  expect_outcomes(
      every, "iwrite_all: uncommitted datatype",
      [&] { return file.iwrite_all(data, 1, uncommitted).get(); }, ErrorCode::invalid_datatype);
  MPI_Type_free(&uncommitted);
  const int mine = world_rank();
  CHECK(file.write_at_all(world_rank() * sizeof(int), &mine, 1, MPI_INT) == sizeof(int));
  int back = -1;
  CHECK(file.read_at_all(world_rank() * sizeof(int), &back, 1, MPI_INT) == sizeof(int));
  CHECK(back == mine);
  file.close();
}
