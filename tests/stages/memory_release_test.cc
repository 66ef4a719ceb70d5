// The release of a call's memory (CollectiveRequest::on_memory_released,
// told where the data phase ends, engine/pipelines.cc): once per call, on
// every route, failed calls included, before the call completes; and
// late enough: a write's memory scribbled over the moment it is released
// leaves the file as written, a read's memory holds its data by then.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flowio/error.h"
#include "flowio/statistics.h"
#include "runtime/core/flat_type.h"
#include "runtime/engine/collective_context.h"
#include "tests/stages/open_file.h"
#include "tests/stages/stage_harness.h"
#include "tests/stages/stage_test_cases.h"
#include "tests/support/fault_scope.h"
#include "tests/support/with_hint.h"
#include "tests/support/world.h"

namespace flowio::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::int64_t kLength = 512;  // bytes of a block
constexpr int kCallBlocks = 64;        // blocks of a process: several windows
constexpr std::int64_t kBytes = kLength * kCallBlocks;

// What a call's on_memory_released saw, written on the thread that
// released it and read by the test once the call has completed.
struct Watch {
  std::atomic<int> releases{0};
  // on_done has run; shared with on_done, which may run after the test
  // has seen the call's future ready and let go of the Watch.
  std::shared_ptr<std::atomic<bool>> completed = std::make_shared<std::atomic<bool>>(false);
  bool late = false;  // released after completing
  Clock::time_point released_at;
  std::vector<std::byte> seen;  // a read's memory as it was released
};

// Has `request` tell `watch` of its release. A write's memory, `memory`,
// is scribbled over right then: the file must not see it. A read's is
// kept as it was.
void watch_release(runtime::CollectiveRequest& request, Watch& watch,
                   std::vector<std::byte>& memory) {
  request.on_memory_released = [&watch, &memory, writing = request.writing] {
    watch.late = watch.completed->load();
    watch.released_at = Clock::now();
    if (writing) {
      std::fill(memory.begin(), memory.end(), std::byte{'#'});
    } else {
      watch.seen = memory;
    }
    watch.releases.fetch_add(1);
  };
}

struct Outcome {
  bool failed = false;
  Clock::time_point completed_at;
  OperationStatistics statistics;
};

// Runs `request` blocking (inline, alone on its file) or started and waited
// for (in the background), as executors_test does.
Outcome call(OpenFile& file, runtime::CollectiveRequest request, bool blocking, Watch& watch) {
  Outcome outcome;
  request.blocking = blocking;
  auto on_done = [completed = watch.completed] { completed->store(true); };
  if (blocking) {
    std::exception_ptr failure;
    runtime::run_collective(file.context, std::move(request), on_done, failure);
    outcome.failed = failure != nullptr;
  } else {
    try {
      runtime::start_collective(file.context, std::move(request), on_done).get();
    } catch (...) {
      outcome.failed = true;
    }
  }
  outcome.completed_at = Clock::now();
  outcome.statistics = file.context.statistics().back();
  return outcome;
}

// This process's memory for its blocks, contiguous or every other block
// (strided_request), holding `data`.
std::vector<std::byte> memory_holding(const std::vector<std::byte>& data, bool strided) {
  std::vector<std::byte> memory(data.size() * (strided ? 2 : 1), std::byte{0});
  for (int block = 0; block < kCallBlocks; ++block) {
    std::copy_n(data.begin() + block * kLength, kLength,
                memory.begin() + (strided ? 2 : 1) * block * kLength);
  }
  return memory;
}

// The file once every process wrote its pattern() through the
// interleaved view.
std::vector<std::byte> expected_file() {
  std::vector<std::byte> file(static_cast<std::size_t>(kBytes * world_size()));
  for (int rank = 0; rank < world_size(); ++rank) {
    const std::vector<std::byte> data = pattern(rank, kBytes);
    for (int block = 0; block < kCallBlocks; ++block) {
      std::copy_n(data.begin() + block * kLength, kLength,
                  file.begin() + (block * world_size() + rank) * kLength);
    }
  }
  return file;
}

// A write, then a read, of the pattern under `hints`, blocking or not:
// each releases its memory once, before it completes, and late enough.
// Returns the write's statistics.
OperationStatistics check_route(const std::string& name, const Hints& hints, bool strided,
                                bool blocking) {
  CAPTURE(name);
  CAPTURE(blocking);
  StageHarness harness(name);
  OpenFile file(harness.path());
  const std::vector<std::byte> data = pattern(world_rank(), kBytes);
  auto request = [&](bool writing, std::vector<std::byte>& memory) {
    return strided ? harness.strided_request(writing, kLength, kCallBlocks, memory.data(), hints)
                   : harness.request(writing, kLength, kCallBlocks, memory.data(), hints);
  };

  std::vector<std::byte> written = memory_holding(data, strided);
  Watch write_watch;
  runtime::CollectiveRequest write = request(true, written);
  watch_release(write, write_watch, written);
  const Outcome wrote = call(file, std::move(write), blocking, write_watch);
  CHECK_FALSE(wrote.failed);
  CHECK(write_watch.releases.load() == 1);
  CHECK_FALSE(write_watch.late);
  CHECK(harness.file_bytes() == expected_file());

  std::vector<std::byte> read(written.size(), std::byte{0});
  Watch read_watch;
  runtime::CollectiveRequest reading = request(false, read);
  watch_release(reading, read_watch, read);
  CHECK_FALSE(call(file, std::move(reading), blocking, read_watch).failed);
  CHECK(read_watch.releases.load() == 1);
  CHECK_FALSE(read_watch.late);
  CHECK(read_watch.seen == memory_holding(data, strided));
  return wrote.statistics;
}

// This process's part without data, as the API makes it for a refusal or
// a failure before the call reached the runtime.
runtime::CollectiveRequest without_data(const Hints& hints) {
  runtime::CollectiveRequest request;
  request.writing = true;
  request.settings = std::make_shared<const runtime::CollectiveSettings>(
      runtime::CollectiveSettings::from_hints(hints, world_size(), true));
  request.memory_type = std::make_shared<const core::FlatType>();
  request.memory = core::MemoryLayout{request.memory_type.get(), 0, 0};
  return request;
}

const Hints kWindows = with_hint(kTwoPhase, "cb_buffer_size", "4096");

}  // namespace

// Point-to-point two-phase I/O (client items and windows), from contiguous
// memory (sent in place) and from strided memory (packed).
TEST_CASE("Engine.MemoryRelease.TwoPhase") {
  for (const bool blocking : {false, true}) {
    check_route("release_two_phase", kWindows, false, blocking);
    check_route("release_staged", kWindows, true, blocking);
  }
}

// Alltoallw rounds, and framed (compressed) messages.
TEST_CASE("Engine.MemoryRelease.AlltoallwAndCompressed") {
  for (const bool blocking : {false, true}) {
    check_route("release_alltoallw", with_hint(kWindows, "flowio_exchange", "alltoallw"), false,
                blocking);
    check_route(
        "release_compressed",
        with_hint(with_hint(kWindows, "flowio_compress", "on"), "flowio_compress_min_bytes", "0"),
        false, blocking);
  }
}

// Every process its own part: in the background by the direct stages;
// blocking and alone, at the call, the gather then settling the call
// (no agreement: released as it leaves control).
TEST_CASE("Engine.MemoryRelease.Direct") {
  check_route("release_direct", kDirect, false, false);
  const OperationStatistics settled = check_route("release_settled", kDirect, false, true);
  // Settled calls run no agreement.
  CHECK(std::none_of(
      settled.stages.begin(), settled.stages.end(),
      [](const StageStatistics& stage) { return stage.name == "agree" && stage.seconds > 0; }));
}

// A call that fails releases its memory once too, before it completes:
// bad arguments on the last process, a part that failed before the call
// reached the runtime, a stage that fails in the data phase.
TEST_CASE("Engine.MemoryRelease.FailedCalls") {
  const bool last = world_rank() == world_size() - 1;
  for (const bool blocking : {false, true}) {
    for (const char* failure : {"refused", "failed before", "pack"}) {
      CAPTURE(blocking);
      CAPTURE(failure);
      StageHarness harness("release_failed");
      OpenFile file(harness.path());
      std::vector<std::byte> memory = pattern(world_rank(), kBytes);
      runtime::CollectiveRequest request =
          harness.request(true, kLength, kCallBlocks, memory.data(), kWindows);
      std::optional<FaultScope> faults;
      if (std::string(failure) == "refused" && last) {
        request = without_data(kWindows);
        request.refused = static_cast<int>(ErrorCode::invalid_argument) + 1;
      } else if (std::string(failure) == "failed before" && last) {
        request = without_data(kWindows);
        request.failed_before = std::make_exception_ptr(IoError(ErrorCode::io, "injected", EIO));
        request.failed_before_stage = "describe";
      } else if (std::string(failure) == "pack") {
        faults.emplace("on=collective.pack,rank=0,fault=eio");
      }
      Watch watch;
      watch_release(request, watch, memory);
      CHECK(call(file, std::move(request), blocking, watch).failed);
      CHECK(watch.releases.load() == 1);
      CHECK_FALSE(watch.late);
    }
  }
}

// A durable write releases its memory before its sync: with the persist
// stage stalled 1.2 s on every process, the call completes that long
// after its memory was released.
TEST_CASE("Engine.MemoryRelease.BeforeTheSync") {
  StageHarness harness("release_durable");
  OpenFile file(harness.path());
  std::vector<std::byte> memory = pattern(world_rank(), kBytes);
  runtime::CollectiveRequest request = harness.request(
      true, kLength, kCallBlocks, memory.data(), with_hint(kWindows, "flowio_durable", "enable"));
  Watch watch;
  watch_release(request, watch, memory);
  const FaultScope stalled_sync("on=collective.persist,fault=stall,ms=1200");
  const Outcome outcome = call(file, std::move(request), false, watch);
  CHECK_FALSE(outcome.failed);
  REQUIRE(watch.releases.load() == 1);
  const double sync_seconds =
      std::chrono::duration<double>(outcome.completed_at - watch.released_at).count();
  CAPTURE(sync_seconds);
  CHECK(sync_seconds > 0.8);
  CHECK(harness.file_bytes() == expected_file());
}

}  // namespace flowio::testing
