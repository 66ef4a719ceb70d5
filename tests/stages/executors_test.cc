// The two executors on the same calls: a blocking call alone on its file
// runs its stages on the caller's thread (the inline runner), the same
// call made nonblocking runs them in the background graph
// (engine/collective_context.h chooses). Both must leave the same bytes,
// return the same result and report the same statistics: what every
// stage moved, sent and asked of the file, the iterations, the method,
// whether the plan was reused. Only times may differ.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "flowio/statistics.h"
#include "runtime/engine/collective_context.h"
#include "tests/stages/open_file.h"
#include "tests/stages/stage_harness.h"
#include "tests/stages/stage_test_cases.h"
#include "tests/support/world.h"

namespace flowio::testing {

namespace {

struct Outcome {
  std::size_t result = 0;
  bool failed = false;
  OperationStatistics statistics;
};

// The call `request` on `file`: blocking (inline) or started and waited
// for (background).
Outcome call(OpenFile& file, runtime::CollectiveRequest request, bool blocking) {
  Outcome outcome;
  request.blocking = blocking;
  if (blocking) {
    std::exception_ptr failure;
    outcome.result = runtime::run_collective(
        file.context, std::move(request), [] {}, failure);
    outcome.failed = failure != nullptr;
  } else {
    try {
      outcome.result = runtime::start_collective(file.context, std::move(request), [] {}).get();
    } catch (...) {
      outcome.failed = true;
    }
  }
  outcome.statistics = file.context.statistics().back();
  return outcome;
}

void check_same_statistics(const OperationStatistics& a, const OperationStatistics& b) {
  CHECK(a.writing == b.writing);
  CHECK(a.bytes == b.bytes);
  CHECK(a.aggregators == b.aggregators);
  CHECK(a.aggregator == b.aggregator);
  CHECK(a.iterations == b.iterations);
  CHECK(a.realm_policy == b.realm_policy);
  CHECK(a.method == b.method);
  CHECK(a.plan_reused == b.plan_reused);
  CHECK(a.exchange == b.exchange);
  REQUIRE(a.stages.size() == b.stages.size());
  for (std::size_t i = 0; i < a.stages.size(); ++i) {
    INFO("stage " << a.stages[i].name);
    CHECK(a.stages[i].name == b.stages[i].name);
    CHECK(a.stages[i].bytes == b.stages[i].bytes);
    CHECK(a.stages[i].messages == b.stages[i].messages);
    CHECK(a.stages[i].io_requests == b.stages[i].io_requests);
  }
  CHECK(a.compression.data_bytes_in == b.compression.data_bytes_in);
  CHECK(a.compression.data_bytes_out == b.compression.data_bytes_out);
}

// Writes, then reads back, through each executor in turn (on files of
// their own), under `hints`, with memory contiguous or every other block.
void compare_executors(const std::string& name, const flowio::Hints& hints, bool strided) {
  constexpr std::int64_t kBlock = 512;
  constexpr int kBlocks = 64;
  StageHarness inline_file(name + "_inline");
  StageHarness background_file(name + "_background");
  OpenFile inline_open(inline_file.path());
  OpenFile background_open(background_file.path());
  const std::vector<std::byte> data = pattern(world_rank(), kBlock * kBlocks);
  std::vector<std::byte> memory(data.size() * 2);
  for (int block = 0; block < kBlocks; ++block) {
    std::copy_n(data.begin() + block * kBlock, kBlock,
                memory.begin() + (strided ? 2 : 1) * block * kBlock);
  }
  auto request = [&](StageHarness& harness, bool writing, void* buffer) {
    return strided ? harness.strided_request(writing, kBlock, kBlocks, buffer, hints)
                   : harness.request(writing, kBlock, kBlocks, buffer, hints);
  };
  // Twice each way: the second call may reuse the first's plan.
  for (int round = 0; round < 2; ++round) {
    const Outcome in_line = call(inline_open, request(inline_file, true, memory.data()), true);
    const Outcome behind =
        call(background_open, request(background_file, true, memory.data()), false);
    CHECK_FALSE(in_line.failed);
    CHECK_FALSE(behind.failed);
    CHECK(in_line.result == behind.result);
    check_same_statistics(in_line.statistics, behind.statistics);
  }
  CHECK(inline_file.file_bytes() == background_file.file_bytes());
  CHECK(inline_file.file_bytes().size() == static_cast<std::size_t>(data.size() * world_size()));
  for (int round = 0; round < 2; ++round) {
    std::vector<std::byte> got_inline(memory.size(), std::byte{0});
    std::vector<std::byte> got_behind(memory.size(), std::byte{0});
    const Outcome in_line = call(inline_open, request(inline_file, false, got_inline.data()), true);
    const Outcome behind =
        call(background_open, request(background_file, false, got_behind.data()), false);
    CHECK(in_line.result == behind.result);
    CHECK(in_line.result == data.size());
    check_same_statistics(in_line.statistics, behind.statistics);
    CHECK(got_inline == got_behind);
  }
}

}  // namespace

TEST_CASE("Executors.SameCallSameOutcome.TwoPhase") {
  compare_executors(
      "executors_two_phase",
      {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}, {"cb_buffer_size", "4096"}},
      false);
}

TEST_CASE("Executors.SameCallSameOutcome.StagedMemory") {
  compare_executors(
      "executors_staged",
      {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}, {"cb_buffer_size", "4096"}},
      true);
}

TEST_CASE("Executors.SameCallSameOutcome.Alltoallw") {
  compare_executors("executors_alltoallw",
                    {{"romio_cb_write", "enable"},
                     {"romio_cb_read", "enable"},
                     {"cb_buffer_size", "4096"},
                     {"flowio_exchange", "alltoallw"}},
                    false);
}

TEST_CASE("Executors.SameCallSameOutcome.Compressed") {
  compare_executors("executors_compressed",
                    {{"romio_cb_write", "enable"},
                     {"romio_cb_read", "enable"},
                     {"cb_buffer_size", "4096"},
                     {"flowio_compress", "on"},
                     {"flowio_compress_min_bytes", "0"}},
                    false);
}

}  // namespace flowio::testing
