// The data phase's stages alone (pack_stage.cc, compress_stage.cc,
// exchange_stage.cc, decompress_stage.cc, unpack_stage.cc, io_stage.cc,
// round_stage.cc, direct_stage.cc): each run on an operation brought to
// its input by the stages before it, and what it leaves checked.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/stages/stage_harness.h"
#include "tests/stages/stage_test_cases.h"
#include "tests/support/with_hint.h"
#include "tests/support/world.h"

namespace flowio::testing {

namespace {

// This process's pattern written collectively through the stages, with
// `hints` added to two-phase I/O's.
void write_everywhere(StageHarness& harness, const flowio::Hints& hints = {}) {
  flowio::Hints all = kTwoPhase;
  all.insert(hints.begin(), hints.end());
  PatternWrite write(harness, all);
  REQUIRE(write.walk.to_end() == nullptr);
}

}  // namespace

// Contiguous memory: a client item's message is its bytes in place.
TEST_CASE("Stages.Pack.ContiguousMemoryGoesInPlace") {
  StageHarness harness("pack");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::pack_stage);
  const runtime::Moving& moving = write.walk.op().phase<runtime::Moving>();
  REQUIRE(write.walk.items().client == moving.plan->client_items.size());
  for (std::size_t item = 0; item < write.walk.items().client; ++item) {
    const runtime::ClientItemPlan& plan = moving.plan->client_items[item];
    CHECK(moving.client_runs[item].data ==
          reinterpret_cast<const char*>(write.data.data()) + plan.from);
  }
  CHECK(write.walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
}

// Memory every other block: each item's bytes packed into its staging.
TEST_CASE("Stages.Pack.StridedMemoryIsPackedIntoStaging") {
  StageHarness harness("pack_strided");
  const std::vector<std::byte> data = pattern(world_rank(), kProcessBytes);
  std::vector<std::byte> memory(static_cast<std::size_t>(2 * kProcessBytes), std::byte{0xee});
  for (int block = 0; block < kBlocks; ++block) {
    std::copy_n(data.begin() + block * kBlockBytes, kBlockBytes,
                memory.begin() + 2 * block * kBlockBytes);
  }
  StageWalk walk(harness,
                 harness.strided_request(true, kBlockBytes, kBlocks, memory.data(), kTwoPhase));
  walk.through(runtime::pack_stage);
  const runtime::Moving& moving = walk.op().phase<runtime::Moving>();
  for (std::size_t item = 0; item < walk.items().client; ++item) {
    const runtime::ClientItemPlan& plan = moving.plan->client_items[item];
    const runtime::ClientRun& run = moving.client_runs[item];
    REQUIRE(run.data == run.staging.data());
    CHECK(std::equal(data.begin() + plan.from, data.begin() + plan.from + plan.bytes,
                     reinterpret_cast<const std::byte*>(run.data)));
  }
  CHECK(walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
}

// A write's window stages: the aggregators' windows hold the clients'
// bytes after the exchange, and the file after the window write.
TEST_CASE("Stages.ExchangeAndIo.WindowsHoldTheClientsBytes") {
  StageHarness harness("exchange");
  PatternWrite write(harness, kTwoPhase);
  write.walk.through(runtime::client_exchange_stage);
  const runtime::Moving& moving = write.walk.op().phase<runtime::Moving>();
  const std::vector<std::byte> file = interleaved_file(world_size());
  for (std::size_t item = 0; item < write.walk.items().window; ++item) {
    const runtime::WindowPlan& window = moving.plan->windows[item];
    CHECK_FALSE(moving.window_runs[item].client_failed);
    // Nothing of this window in the file yet: its write has not run (other
    // aggregators' windows may be written, past it or around it).
    const std::vector<std::byte> before =
        harness.read_here(window.window.begin, window.window.end - window.window.begin);
    CHECK(std::all_of(before.begin(), before.end(), [](std::byte b) { return b == std::byte{0}; }));
  }
  write.walk.through(runtime::window_write_stage);
  CHECK(write.walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == file);
}

// A read's stages: windows read from the file, sent, and unpacked into
// each process's memory.
TEST_CASE("Stages.ReadAndUnpack.EveryProcessGetsItsBytes") {
  StageHarness harness("unpack");
  write_everywhere(harness);
  std::vector<std::byte> got(static_cast<std::size_t>(kProcessBytes), std::byte{0});
  StageWalk walk(harness, harness.request(false, kBlockBytes, kBlocks, got.data(), kTwoPhase));
  walk.through(runtime::window_read_stage);
  CHECK(got == std::vector<std::byte>(got.size(), std::byte{0}));  // nothing arrived yet
  CHECK(walk.to_end() == nullptr);
  CHECK(got == pattern(world_rank(), kProcessBytes));
}

// Compression on: messages go framed and compressed, and what arrives is
// the same bytes.
TEST_CASE("Stages.Compress.FramedMessagesCarryTheSameBytes") {
  StageHarness harness("compress");
  // Zeros compress.
  std::vector<std::byte> zeros(static_cast<std::size_t>(64 * 1024), std::byte{0});
  flowio::Hints hints = kTwoPhase;
  hints["flowio_compress"] = "on";
  hints["flowio_compress_min_bytes"] = "0";
  StageWalk walk(harness, harness.request(true, 4096, 16, zeros.data(), hints));
  walk.through(runtime::client_compress_stage);
  CHECK(walk.op().phase<runtime::Moving>().framed);
  CHECK(walk.to_end() == nullptr);
  if (world_size() > 1) {
    const auto statistics = walk.op().compression_statistics();
    REQUIRE(statistics != nullptr);
    CHECK(statistics->data_bytes_out < statistics->data_bytes_in);
  }
  const std::vector<std::byte> file = harness.file_bytes();
  CHECK(file.size() == static_cast<std::size_t>(64 * 1024 * world_size()));
  CHECK(std::all_of(file.begin(), file.end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST_CASE("Stages.Rounds.AlltoallwCarriesEveryPart") {
  StageHarness harness("rounds");
  const flowio::Hints hints = with_hint(kTwoPhase, "flowio_exchange", "alltoallw");
  PatternWrite write(harness, hints);
  write.walk.through(runtime::round_finish_stage);
  CHECK(write.walk.items().round > 0);
  CHECK(write.walk.items().client == 0);
  CHECK(write.walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
  // And back.
  std::vector<std::byte> got(static_cast<std::size_t>(kProcessBytes));
  StageWalk read(harness, harness.request(false, kBlockBytes, kBlocks, got.data(), hints));
  CHECK(read.to_end() == nullptr);
  CHECK(got == write.data);
}

// Direct: this process's own part, by the direct stages (not at the
// call: the operation does not run inline).
TEST_CASE("Stages.Direct.OwnPartByItsStages") {
  StageHarness harness("direct");
  PatternWrite write(harness, kDirect, false);
  write.walk.through(runtime::direct_lock_stage);
  CHECK_FALSE(write.walk.op().phase<runtime::Moving>().accessed_directly);
  write.walk.through(runtime::direct_io_stage);
  CHECK(write.walk.op().phase<runtime::Moving>().accessed_directly);
  const std::vector<std::byte> first = harness.read_here(world_rank() * kBlockBytes, kBlockBytes);
  CHECK(
      std::equal(first.begin(), first.end(), write.data.begin(), write.data.begin() + kBlockBytes));
  CHECK(write.walk.to_end() == nullptr);
  CHECK(harness.file_bytes() == interleaved_file(world_size()));
  std::vector<std::byte> got(static_cast<std::size_t>(kProcessBytes));
  StageWalk read(harness, harness.request(false, kBlockBytes, kBlocks, got.data(), kDirect), false);
  read.through(runtime::direct_io_stage);
  CHECK(read.op().phase<runtime::Moving>().read_directly == kProcessBytes);
  CHECK(read.to_end() == nullptr);
  CHECK(got == write.data);
}

}  // namespace flowio::testing
