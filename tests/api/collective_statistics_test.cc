// What collective calls record and the hints that govern them, on 1, 2
// and 4 ranks: File::statistics() (one record per operation, the last
// 1024 kept), hints given with set_hints taking effect, and the hints in
// force reported by File::hints().
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

// The byte every test expects at `file_offset` of a file it wrote.
char pattern(std::int64_t file_offset) { return static_cast<char>((file_offset * 131 + 7) % 251); }

}  // namespace

// statistics() gains one entry per completed collective operation, with
// this rank's bytes, the direction, the hints' choices and the stages that
// ran; sequence numbers count the file's collective operations from 0.
TEST_CASE("Api.Collective.StatisticsRecordEachOperation") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_statistics");
  const int rank = world_rank(), ranks = world_size();
  constexpr std::int64_t kBytes = 10000;
  constexpr std::int64_t kBuffer = 4096;
  std::vector<char> data(kBytes);
  for (std::int64_t i = 0; i < kBytes; ++i) {
    data[static_cast<std::size_t>(i)] = pattern(rank * kBytes + i);
  }
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close,
                         {{"cb_nodes", "1"},
                          {"romio_cb_write", "enable"},
                          {"romio_cb_read", "enable"},
                          {"cb_buffer_size", std::to_string(kBuffer)},
                          {"flowio_realm_policy", "even"},
                          {"flowio_exchange", "point_to_point"}});
  CHECK(file.statistics().empty());
  file.set_view(rank * kBytes, MPI_BYTE, MPI_BYTE);
  const std::set<std::string> stage_names = {"offsets",  "realms",   "metadata",   "pack",
                                             "compress", "exchange", "decompress", "io",
                                             "unpack",   "agree"};

  // Checks the newest entry after `operation` completed `before` entries in.
  // `dense`: the ranks' accesses together cover the whole region they span.
  const auto check_newest = [&](std::size_t before, bool writing, std::int64_t bytes, bool dense) {
    const std::vector<flowio::OperationStatistics> all = file.statistics();
    REQUIRE(all.size() == before + 1);
    const flowio::OperationStatistics& newest = all.back();
    CHECK(newest.sequence == before);
    CHECK(newest.writing == writing);
    CHECK(newest.bytes == bytes);
    CHECK(newest.seconds >= 0);
    CHECK(newest.realm_policy == "even");
    CHECK(newest.exchange == "point_to_point");
    // cb_nodes=1 with two-phase I/O forced: exactly one rank accessed the file.
    CHECK(newest.aggregators == 1);
    int aggregators = newest.aggregator ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &aggregators, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(aggregators == 1);
    if (newest.aggregator && dense) {
      // The aggregator handles the whole access region, cb_buffer_size at a time.
      CHECK(newest.iterations >= (ranks * kBytes + kBuffer - 1) / kBuffer);
      CHECK(!newest.method.empty());
    }
    CHECK(!newest.stages.empty());
    for (const flowio::StageStatistics& stage : newest.stages) {
      CAPTURE(stage.name);
      CHECK(stage_names.count(stage.name) == 1);
      CHECK(stage.seconds >= 0);
      CHECK(stage.bytes >= 0);
    }
    for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i].sequence > all[i - 1].sequence);
  };

  CHECK(file.write_all(data.data(), kBytes, MPI_CHAR) == static_cast<std::size_t>(kBytes));
  check_newest(0, true, kBytes, true);
  std::vector<char> back(kBytes);
  CHECK(file.iread_at_all(0, back.data(), kBytes, MPI_CHAR).get() ==
        static_cast<std::size_t>(kBytes));
  CHECK(back == data);
  check_newest(1, false, kBytes, true);
  const MPI_Count half = rank % 2 == 0 ? kBytes / 2 : 0;
  CHECK(file.iwrite_at_all(0, data.data(), half, MPI_CHAR).get() == static_cast<std::size_t>(half));
  check_newest(2, true, half, false);
  file.close();
}

// statistics() keeps the most recent 1024 operations, oldest first. Each
// rank opens its own file on MPI_COMM_SELF: 1030 collective calls over the
// world would take tens of seconds on 4 ranks sharing 2 cores.
TEST_CASE("Api.Collective.StatisticsKeepTheLast1024") {
  const std::string path = flowio::testing::scratch_path(
      MPI_COMM_WORLD, "coll_statistics_many_rank" + std::to_string(world_rank()));
  flowio::File file = flowio::File::open(
      MPI_COMM_SELF, path,
      flowio::Mode::create | flowio::Mode::wronly | flowio::Mode::delete_on_close);
  const char byte = 'x';
  constexpr int kOperations = 1030;
  for (int i = 0; i < kOperations; ++i) file.write_at_all(i % 7, &byte, 1, MPI_CHAR);
  const std::vector<flowio::OperationStatistics> all = file.statistics();
  REQUIRE(all.size() == 1024);
  CHECK(all.front().sequence == kOperations - 1024);
  CHECK(all.back().sequence == kOperations - 1);
  file.close();
}

// Hints given with set_hints after open govern the calls after it: two-phase
// I/O forced, then turned off (direct), then forced again.
TEST_CASE("Api.Collective.SetHintsTakesEffect") {
  const int rank = world_rank();
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_set_hints");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close,
                         {{"romio_cb_write", "enable"}});
  constexpr std::int64_t kBytes = 4096;
  std::vector<char> data(kBytes, 'z');
  const auto last_method = [&] {
    file.write_at_all(rank * kBytes, data.data(), kBytes, MPI_CHAR);
    return file.statistics().back().method;
  };
  const std::string forced = last_method();
  CHECK(forced != "direct");
  file.set_hints({{"romio_cb_write", "disable"}});
  CHECK(last_method() == "direct");
  file.set_hints({{"romio_cb_write", "enable"}});
  CHECK(last_method() == forced);
  file.close();
}

// hints() reports the collective hints given at open and, for those not
// given, the documented defaults.
TEST_CASE("Api.Collective.HintsInForce") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "coll_hints");
  flowio::File given = flowio::File::open(
      MPI_COMM_WORLD, path,
      flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close,
      {{"cb_nodes", "1"}, {"cb_buffer_size", "65536"}, {"flowio_realm_policy", "aligned"}});
  const flowio::Hints in_force = given.hints();
  CHECK(in_force.at("cb_nodes") == "1");
  CHECK(in_force.at("cb_buffer_size") == "65536");
  CHECK(in_force.at("flowio_realm_policy") == "aligned");
  given.close();

  flowio::File defaults =
      flowio::File::open(MPI_COMM_WORLD, path,
                         flowio::Mode::create | flowio::Mode::rdwr | flowio::Mode::delete_on_close);
  const flowio::Hints default_hints = defaults.hints();
  const auto value = [&](const std::string& key) {
    const auto found = default_hints.find(key);
    return found == default_hints.end() ? std::string("(absent)") : found->second;
  };
  CHECK(value("cb_buffer_size") == std::to_string(16 << 20));
  CHECK(value("flowio_buffers_in_flight") == "3");
  CHECK(value("cb_nodes") == std::to_string(world_size()));
  CHECK(value("flowio_realm_policy") == "even");
  CHECK(value("flowio_exchange") == "point_to_point");
  CHECK(value("flowio_ds_mapping") == "automatic");
  defaults.close();
}
