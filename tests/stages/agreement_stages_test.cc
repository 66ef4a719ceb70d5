// The agreement's stages alone (persist_stage.cc, agree_stage.cc).
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "flowio/error.h"
#include "tests/stages/stage_harness.h"
#include "tests/stages/stage_test_cases.h"
#include "tests/support/world.h"

namespace runtime = flowio::runtime;
using flowio::testing::kBlockBytes;
using flowio::testing::kBlocks;
using flowio::testing::kProcessBytes;
using flowio::testing::kTwoPhase;
using flowio::testing::pattern;
using flowio::testing::StageHarness;
using flowio::testing::StageWalk;
using flowio::testing::world_rank;
using flowio::testing::world_size;

TEST_CASE("Stages.Persist.ADurableWriteIsSyncedBeforeTheAgreement") {
  StageHarness harness("persist");
  std::vector<std::byte> data = pattern(world_rank(), kProcessBytes);
  flowio::Hints hints = kTwoPhase;
  hints["flowio_durable"] = "enable";
  StageWalk walk(harness, harness.request(true, kBlockBytes, kBlocks, data.data(), hints));
  walk.through(runtime::persist_stage);
  CHECK(walk.op().failure() == nullptr);
  CHECK(walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == flowio::testing::interleaved_file(world_size()));
}

// A failure on one process, kept in its operation by a data stage,
// reaches every process through the agreement, naming the stage.
TEST_CASE("Stages.Agree.AFailureOnOneProcessReachesEvery") {
  StageHarness harness("agree");
  std::vector<std::byte> data = pattern(world_rank(), kProcessBytes);
  StageWalk walk(harness, harness.request(true, kBlockBytes, kBlocks, data.data(), kTwoPhase));
  walk.through(runtime::plan_check_stage);
  if (world_rank() == 0) {
    walk.op().fail(std::make_exception_ptr(flowio::IoError(flowio::ErrorCode::io, "injected", EIO)),
                   "pack");
  }
  const std::exception_ptr outcome = walk.to_end();
  REQUIRE(outcome != nullptr);
  try {
    std::rethrow_exception(outcome);
  } catch (const flowio::Error& error) {
    CHECK(std::string(error.what()).find("pack") != std::string::npos);
  }
}

TEST_CASE("Stages.Agree.SuccessEverywhere") {
  StageHarness harness("agree_success");
  std::vector<std::byte> data = pattern(world_rank(), kProcessBytes);
  StageWalk walk(harness, harness.request(true, kBlockBytes, kBlocks, data.data(), kTwoPhase));
  walk.through(runtime::agree_stage);
  CHECK(walk.op().phase<runtime::Agreeing>().outcome == nullptr);
}
