// The agreement's stages alone (persist_stage.cc, agree_stage.cc).
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "flowio/error.h"
#include "tests/stages/stage_harness.h"
#include "tests/stages/stage_test_cases.h"
#include "tests/support/with_hint.h"
#include "tests/support/world.h"

namespace flowio::testing {

TEST_CASE("Stages.Persist.ADurableWriteIsSyncedBeforeTheAgreement") {
  StageHarness harness("persist");
  PatternWrite write(harness, with_hint(kTwoPhase, "flowio_durable", "enable"));
  write.walk.through(runtime::persist_stage);
  CHECK(write.walk.op().failure() == nullptr);
  CHECK(write.walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
}

// A failure on one process, kept in its operation by a data stage,
// reaches every process through the agreement, naming the stage.
TEST_CASE("Stages.Agree.AFailureOnOneProcessReachesEvery") {
  StageHarness harness("agree");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::plan_check_stage);
  if (world_rank() == 0) {
    write.walk.op().fail(
        std::make_exception_ptr(flowio::IoError(flowio::ErrorCode::io, "injected", EIO)), "pack");
  }
  const std::exception_ptr outcome = write.walk.to_end();
  REQUIRE(outcome != nullptr);
  try {
    std::rethrow_exception(outcome);
  } catch (const flowio::Error& error) {
    CHECK(std::string(error.what()).find("pack") != std::string::npos);
  }
}

TEST_CASE("Stages.Agree.SuccessEverywhere") {
  StageHarness harness("agree_success");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::agree_stage);
  CHECK(write.walk.op().phase<runtime::Agreeing>().outcome == nullptr);
}

}  // namespace flowio::testing
