// The control stages alone (offsets_stage.cc, realms_stage.cc,
// metadata_stage.cc, plan_stage.cc): each run on an operation brought to
// its input by the stages before it, and what it hands on checked.
#include <doctest/doctest.h>

#include <numeric>

#include "tests/stages/stage_harness.h"
#include "tests/stages/stage_test_cases.h"
#include "tests/support/world.h"

namespace flowio::testing {

TEST_CASE("Stages.Offsets.AnnouncesThisProcessesAccess") {
  StageHarness harness("offsets");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::offsets_stage);
  REQUIRE(write.walk.op().in<runtime::Announcing>());
  const runtime::Announcing& announcing = write.walk.op().phase<runtime::Announcing>();
  REQUIRE(announcing.announcements.size() == static_cast<std::size_t>(world_size()));
  const runtime::Announcement& own =
      announcing.announcements[static_cast<std::size_t>(world_rank())];
  CHECK(own.summary.bytes == kProcessBytes);
  CHECK(own.stream_begin == 0);
  CHECK(own.direction == 1);
  CHECK(own.refused == 0);
  CHECK(own.accessed_early == 0);  // two-phase asked for: nothing moved at the call
  CHECK(own.failed_early == 0);
  CHECK(own.summary.metadata_words > 0);
  CHECK(write.walk.to_end() == nullptr);
}

// A blocking call alone on its file whose part goes direct moves it at
// the call, before anything is exchanged, and says so in its announcement.
TEST_CASE("Stages.Offsets.MovesAnInlineDirectPartAtTheCall") {
  StageHarness harness("offsets_early");
  PatternWrite write(harness, kDirect);
  write.walk.through(runtime::offsets_stage);
  const runtime::Announcing& announcing = write.walk.op().phase<runtime::Announcing>();
  CHECK(announcing.early.accessed);
  CHECK(announcing.early.bytes == kProcessBytes);
  CHECK(announcing.announcements[static_cast<std::size_t>(world_rank())].accessed_early == 1);
  // The first block is in the file already, on this process's own.
  const std::vector<std::byte> first = harness.read_here(world_rank() * kBlockBytes, kBlockBytes);
  CHECK(
      std::equal(first.begin(), first.end(), write.data.begin(), write.data.begin() + kBlockBytes));
  CHECK(write.walk.to_end() == nullptr);
}

TEST_CASE("Stages.Gather.EveryProcessSeesEveryAnnouncement") {
  StageHarness harness("gather");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::gather_stage);
  REQUIRE(write.walk.op().in<runtime::Planning>());
  const runtime::Planning& planning = write.walk.op().phase<runtime::Planning>();
  CHECK(planning.gather == runtime::GatherOutcome::go_on);
  REQUIRE(planning.announcements.size() == static_cast<std::size_t>(world_size()));
  for (const runtime::Announcement& announcement : planning.announcements) {
    CHECK(announcement.summary.bytes == kProcessBytes);
    CHECK(announcement.direction == 1);
  }
  CHECK(write.walk.to_end() == nullptr);
}

// Every process moved its part at the call and none failed: the gather
// settles the call, and nothing is left to plan or move.
TEST_CASE("Stages.Gather.SettlesACallEveryProcessDidEarly") {
  StageHarness harness("gather_settled");
  PatternWrite write(harness, kDirect);
  write.walk.through(runtime::gather_stage);
  const runtime::Planning& planning = write.walk.op().phase<runtime::Planning>();
  CHECK(planning.gather == runtime::GatherOutcome::settled);
  write.walk.through(runtime::plan_check_stage);
  CHECK(write.walk.op().phase<runtime::Planning>().origin == runtime::PlanOrigin::none);
  CHECK(write.walk.to_end() == nullptr);
  CHECK(write.walk.items().client + write.walk.items().window + write.walk.items().round == 0);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
}

// Bad arguments on one process: every process's gather fails the call,
// and the agreement reports the refusal everywhere.
TEST_CASE("Stages.Gather.ARefusalFailsTheCallEverywhere") {
  StageHarness harness("gather_refused");
  std::vector<std::byte> data = pattern(world_rank(), kProcessBytes);
  runtime::CollectiveRequest request =
      harness.request(true, kBlockBytes, kBlocks, data.data(), kTwoPhase);
  if (world_rank() == world_size() - 1) {
    request.refused = static_cast<int>(flowio::ErrorCode::invalid_argument) + 1;
  }
  StageWalk walk(harness, std::move(request));
  walk.through(runtime::gather_stage);
  CHECK(walk.op().phase<runtime::Planning>().gather == runtime::GatherOutcome::failed);
  const std::exception_ptr outcome = walk.to_end();
  REQUIRE(outcome != nullptr);
  CHECK_THROWS_AS(std::rethrow_exception(outcome), flowio::UsageError);
}

TEST_CASE("Stages.Realms.CompilesAPlanThenReusesIt") {
  StageHarness harness("realms");
  std::vector<std::byte> data = pattern(world_rank(), kProcessBytes);
  {
    StageWalk walk(harness, harness.request(true, kBlockBytes, kBlocks, data.data(), kTwoPhase));
    walk.through(runtime::realms_stage);
    const runtime::Planning& planning = walk.op().phase<runtime::Planning>();
    CHECK(planning.origin == runtime::PlanOrigin::compiled);
    REQUIRE(planning.summaries.size() == static_cast<std::size_t>(world_size()));
    for (const flowio::core::AccessSummary& summary : planning.summaries) {
      CHECK(summary.bytes == kProcessBytes);
    }
    REQUIRE(planning.plan != nullptr);
    CHECK(planning.plan->two_phase);
    REQUIRE(planning.plan->layout.has_value());
    CHECK(walk.to_end() == nullptr);
  }
  // The same accesses again: the plan kept in the file's cache.
  StageWalk again(harness, harness.request(true, kBlockBytes, kBlocks, data.data(), kTwoPhase));
  again.through(runtime::realms_stage);
  CHECK(again.op().phase<runtime::Planning>().origin == runtime::PlanOrigin::reused);
  CHECK(again.to_end() == nullptr);
  // Another access (one block fewer): a plan of its own.
  StageWalk other(harness, harness.request(true, kBlockBytes, kBlocks - 1, data.data(), kTwoPhase));
  other.through(runtime::realms_stage);
  CHECK(other.op().phase<runtime::Planning>().origin == runtime::PlanOrigin::compiled);
  CHECK(other.to_end() == nullptr);
}

TEST_CASE("Stages.Realms.DirectWhenEveryProcessGoesItsOwnWay") {
  StageHarness harness("realms_direct");
  // Not inline: nothing moved at the call, so the gather does not settle.
  PatternWrite write(harness, kDirect, false);
  write.walk.through(runtime::realms_stage);
  CHECK(write.walk.op().phase<runtime::Planning>().origin == runtime::PlanOrigin::direct);
  write.walk.through(runtime::plan_check_stage);
  CHECK(runtime::data_route(write.walk.op()) == runtime::DataRoute::direct);
  CHECK(write.walk.to_end() == nullptr);
}

TEST_CASE("Stages.Metadata.DescribesTheAccessToItsAggregators") {
  StageHarness harness("metadata");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::metadata_stage);
  const runtime::Planning& planning = write.walk.op().phase<runtime::Planning>();
  CHECK(planning.descriptions_posted);
  CHECK_FALSE(planning.view_words.empty());
  // Every process meets every realm (the blocks interleave), so each
  // aggregator but itself gets a description, and each aggregator hears
  // from every other process.
  if (world_size() > 1) CHECK(planning.metadata.messages() > 0);
  CHECK(write.walk.to_end() == nullptr);
}

TEST_CASE("Stages.Plan.ItemsCarryTheWholeAccessOnce") {
  StageHarness harness("plan");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::plan_stage);
  const runtime::CollectivePlan& plan = *write.walk.op().phase<runtime::Planning>().plan;
  const std::int64_t carried = std::accumulate(
      plan.client_items.begin(), plan.client_items.end(), std::int64_t{0},
      [](std::int64_t sum, const runtime::ClientItemPlan& item) { return sum + item.bytes; });
  CHECK(carried == kProcessBytes);
  CHECK_FALSE(plan.complete);  // not before the plan check
  write.walk.through(runtime::plan_check_stage);
  CHECK(write.walk.op().phase<runtime::Planning>().made_everywhere);
  CHECK(write.walk.op().phase<runtime::Planning>().plan->complete);
  CHECK(runtime::data_route(write.walk.op()) == runtime::DataRoute::two_phase);
  CHECK(write.walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
}

}  // namespace flowio::testing
