// File realms described by datatypes through the File API, on 1, 2 and 4
// ranks: round-robin stripes (by File::set_file_realms with one type, and
// by the hint flowio_realm_stripe) and one realm per aggregator move the
// right bytes, with one window per stripe of each aggregator's realm that
// holds data (the statistics' iterations); the hints report "datatype"
// while they are in force and the hints' policy after clear_file_realms;
// new realms never rerun a plan of the old ones; realms that overlap,
// leave bytes to no one, differ between processes or no longer fit the
// aggregator count are refused on every process.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

constexpr int kStripe = 1000;          // bytes of a realm stripe
constexpr int kPerRank = 4 * kStripe;  // each rank's contiguous block
const flowio::Hints kTwoPhase = {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}};

using flowio::testing::world_rank;
using flowio::testing::world_size;

// `bytes` bytes, then `slots` times that extent: one stripe per `slots`.
MPI_Datatype spaced_run(int bytes, int slots) {
  MPI_Datatype run, spaced;
  MPI_Type_contiguous(bytes, MPI_BYTE, &run);
  MPI_Type_create_resized(run, 0, static_cast<MPI_Aint>(bytes) * slots, &spaced);
  MPI_Type_commit(&spaced);
  MPI_Type_free(&run);
  return spaced;
}

std::vector<char> data(int round) {
  std::vector<char> bytes(kPerRank);
  for (int i = 0; i < kPerRank; ++i) {
    bytes[i] = static_cast<char>((i * 7 + world_rank() * 31 + round * 13) % 251);
  }
  return bytes;
}

struct Fixture {
  std::string path;
  flowio::File file;

  explicit Fixture(const std::string& name, const flowio::Hints& more = {}) {
    path = flowio::testing::scratch_path(MPI_COMM_WORLD, name);
    flowio::Hints hints = kTwoPhase;
    for (const auto& [key, value] : more) hints[key] = value;
    file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
  }
  ~Fixture() {
    if (file.is_open()) file.close();
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::remove(path.c_str());
  }

  // Each rank writes its block at rank * kPerRank and reads it back.
  flowio::OperationStatistics write_and_check(int round) {
    const std::vector<char> written = data(round);
    const MPI_Offset at = static_cast<MPI_Offset>(world_rank()) * kPerRank;
    CHECK(file.write_at_all(at, written.data(), kPerRank, MPI_BYTE) == kPerRank);
    const flowio::OperationStatistics statistics = file.statistics().back();
    std::vector<char> read(kPerRank, 0);
    CHECK(file.read_at_all(at, read.data(), kPerRank, MPI_BYTE) == kPerRank);
    CHECK(read == written);
    return statistics;
  }
};

}  // namespace

// Stripes by one type: every rank's block is 4 stripes, so each process
// sends 4 messages and each aggregator writes 4 windows (one per stripe of
// its realm); with the hints' even realms, 1 and 1.
TEST_CASE("Api.FileRealms.StripesByType") {
  Fixture fixture("file_realms_type.dat");
  MPI_Datatype realm = spaced_run(kStripe, world_size());
  fixture.file.set_file_realms(flowio::FileRealm{0, realm});
  MPI_Type_free(&realm);  // read at the call
  CHECK(fixture.file.hints().at("flowio_realm_policy") == "datatype");
  const flowio::OperationStatistics striped = fixture.write_and_check(1);
  CHECK(striped.realm_policy == "datatype");
  CHECK(striped.aggregator);
  // One process alone accesses the file itself, without windows.
  if (world_size() > 1) CHECK(striped.iterations == 8);
  fixture.file.clear_file_realms();
  CHECK(fixture.file.hints().at("flowio_realm_policy") == "even");
  const flowio::OperationStatistics even = fixture.write_and_check(2);
  CHECK(even.realm_policy == "even");
  if (world_size() > 1) CHECK(even.iterations == 2);
}

// The hint says the same; with one aggregator, rank 0 writes every stripe.
TEST_CASE("Api.FileRealms.StripeHint") {
  {
    Fixture fixture("file_realms_hint.dat", {{"flowio_realm_stripe", std::to_string(kStripe)}});
    CHECK(fixture.file.hints().at("flowio_realm_policy") == "datatype");
    const flowio::OperationStatistics striped = fixture.write_and_check(1);
    if (world_size() > 1) CHECK(striped.iterations == 8);
  }
  Fixture fixture("file_realms_hint_one.dat",
                  {{"flowio_realm_stripe", std::to_string(kStripe)}, {"cb_nodes", "1"}});
  const flowio::OperationStatistics one = fixture.write_and_check(1);
  // Rank 0's realm is every stripe, one window each (each is a period).
  if (world_size() > 1) CHECK(one.iterations == (world_rank() == 0 ? 4 + 4 * world_size() : 4));
}

// One realm per aggregator: on 2 or more ranks, aggregator 0 takes three
// quarters of every 4 stripes, aggregator 1 the last quarter (cb_nodes=2).
// New realms compile a new plan; the data stays right throughout.
TEST_CASE("Api.FileRealms.ListPerAggregator") {
  if (world_size() < 2) return;
  Fixture fixture("file_realms_list.dat", {{"cb_nodes", "2"}});
  MPI_Datatype three = spaced_run(3 * kStripe, 1), one = spaced_run(kStripe, 1);
  MPI_Datatype three_of_four, one_of_four;
  MPI_Type_create_resized(three, 0, 4 * kStripe, &three_of_four);
  MPI_Type_create_resized(one, 0, 4 * kStripe, &one_of_four);
  MPI_Type_commit(&three_of_four);
  MPI_Type_commit(&one_of_four);
  fixture.file.set_file_realms(
      {flowio::FileRealm{0, three_of_four}, flowio::FileRealm{3 * kStripe, one_of_four}});
  const flowio::OperationStatistics first = fixture.write_and_check(1);
  // Rank r's block is one period: each aggregator (ranks 0 and
  // world_size() / 2) has one window per rank, and each rank sends 2
  // messages.
  const bool aggregates = world_rank() == 0 || world_rank() == world_size() / 2;
  CHECK(first.iterations == 2 + (aggregates ? world_size() : 0));
  CHECK(fixture.write_and_check(1).plan_reused);
  fixture.file.set_file_realms(
      {flowio::FileRealm{kStripe, three_of_four}, flowio::FileRealm{0, one_of_four}});
  CHECK_FALSE(fixture.write_and_check(1).plan_reused);
  CHECK(fixture.file.statistics().back().realm_policy == "datatype");
  // cb_nodes 1 no longer fits two realms.
  CHECK_THROWS_AS(fixture.file.set_hints({{"cb_nodes", "1"}}), flowio::UsageError);
  CHECK(fixture.write_and_check(3).iterations > 0);
  for (MPI_Datatype* type : {&three, &one, &three_of_four, &one_of_four}) MPI_Type_free(type);
}

TEST_CASE("Api.FileRealms.Refused") {
  Fixture fixture("file_realms_refused.dat");
  const auto code_of = [&](auto&& call) {
    try {
      call();
    } catch (const flowio::UsageError& error) {
      return error.code();
    }
    return flowio::ErrorCode::io;  // not thrown
  };
  MPI_Datatype half = spaced_run(kStripe, 2);
  // Two aggregators' worth of realm for world_size() aggregators: leaves
  // bytes to no one on 1 rank, overlaps on 4.
  if (world_size() != 2) {
    CHECK(code_of([&] {
            fixture.file.set_file_realms(flowio::FileRealm{0, half});
          }) == flowio::ErrorCode::invalid_argument);
  }
  // Different realms on different processes.
  if (world_size() > 1) {
    MPI_Datatype mine = spaced_run(kStripe * (world_rank() + 1), world_size());
    CHECK(code_of([&] {
            fixture.file.set_file_realms(flowio::FileRealm{0, mine});
          }) == flowio::ErrorCode::not_same);
    MPI_Type_free(&mine);
  }
  // A list of the wrong length.
  std::vector<flowio::FileRealm> too_many(static_cast<std::size_t>(world_size()) + 1,
                                          flowio::FileRealm{0, half});
  CHECK(code_of([&] { fixture.file.set_file_realms(too_many); }) ==
        flowio::ErrorCode::invalid_argument);
  CHECK(code_of([&] {
          fixture.file.set_file_realms(flowio::FileRealm{0, MPI_DATATYPE_NULL});
        }) == flowio::ErrorCode::invalid_datatype);
  // Nothing refused changed the realms.
  CHECK(fixture.file.hints().at("flowio_realm_policy") == "even");
  CHECK(fixture.write_and_check(1).realm_policy == "even");
  MPI_Type_free(&half);
}
