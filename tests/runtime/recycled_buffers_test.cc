// Buffers kept for reuse: handed out again while their pages are still
// mapped, within the byte budget, oldest dropped first.
#include "runtime/stages/recycled_buffers.h"

#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/engine/pipelines.h"

using flowio::runtime::RecycledBuffers;

// A buffer given back is the one the next request of a size it fits gets.
TEST_CASE("Runtime.RecycledBuffers.ReusesWhatWasGivenBack") {
  RecycledBuffers buffers(1 << 20);
  char* first = nullptr;
  {
    RecycledBuffers::Lease lease = buffers.take(4096);
    REQUIRE(lease);
    first = lease.data();
    std::memset(first, 7, 4096);
    CHECK(buffers.kept_bytes() == 0);
  }
  CHECK(buffers.kept_bytes() == 4096);
  RecycledBuffers::Lease again = buffers.take(1000);
  CHECK(again.data() == first);
  CHECK(buffers.kept_bytes() == 0);
  // Too small for a larger request: a new buffer, the kept one stays.
  again.give_back();
  CHECK_FALSE(again);
  RecycledBuffers::Lease larger = buffers.take(8192);
  CHECK(larger.data() != first);
  CHECK(buffers.kept_bytes() == 4096);
}

// Of the buffers that fit, the smallest is handed out.
TEST_CASE("Runtime.RecycledBuffers.SmallestThatFits") {
  RecycledBuffers buffers(1 << 20);
  RecycledBuffers::Lease big = buffers.take(64 * 1024);
  RecycledBuffers::Lease small = buffers.take(16 * 1024);
  char* const small_data = small.data();
  big.give_back();
  small.give_back();
  CHECK(buffers.kept_bytes() == 80 * 1024);
  CHECK(buffers.take(10 * 1024).data() == small_data);
}

// Beyond the budget the oldest buffers are freed; a buffer larger than the
// whole budget is never kept.
TEST_CASE("Runtime.RecycledBuffers.KeepsWithinBudget") {
  RecycledBuffers buffers(3 * 4096);
  std::vector<RecycledBuffers::Lease> leases;
  for (int i = 0; i < 4; ++i) leases.push_back(buffers.take(4096));
  char* const newest = leases.back().data();
  leases.clear();  // given back oldest first
  CHECK(buffers.kept_bytes() == 3 * 4096);
  { RecycledBuffers::Lease huge = buffers.take(4 * 4096); }
  CHECK(buffers.kept_bytes() == 3 * 4096);
  // The newest survived the trimming.
  bool found = false;
  for (int i = 0; i < 3; ++i) {
    leases.push_back(buffers.take(4096));
    found = found || leases.back().data() == newest;
  }
  CHECK(found);
  CHECK(buffers.kept_bytes() == 0);
}

// A moved lease gives its buffer back once, from where it went.
TEST_CASE("Runtime.RecycledBuffers.MovedLeaseGivesBackOnce") {
  RecycledBuffers buffers(1 << 20);
  RecycledBuffers::Lease lease = buffers.take(4096);
  RecycledBuffers::Lease moved = std::move(lease);
  CHECK_FALSE(lease);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  CHECK(moved);
  lease.give_back();
  CHECK(buffers.kept_bytes() == 0);
  moved = RecycledBuffers::Lease();
  CHECK(buffers.kept_bytes() == 4096);
}

// Threads taking and giving back at once never share a buffer.
TEST_CASE("Runtime.RecycledBuffers.ThreadsNeverShareABuffer") {
  RecycledBuffers buffers(1 << 20);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&buffers, &wrong, t] {
      for (int round = 0; round < 2000; ++round) {
        RecycledBuffers::Lease lease = buffers.take(4096);
        std::memset(lease.data(), t, 4096);
        std::this_thread::yield();
        for (int i = 0; i < 4096; i += 512) wrong[t] += lease.data()[i] != static_cast<char>(t);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(wrong == std::vector<int>(4, 0));
  CHECK(buffers.kept_bytes() <= 4 * 4096);
}

// Converted client items pin a recycled buffer each, yet are let fly as
// many as zero-copy ones: held back to the staged pipeline's few, a
// client's later items were converted only after earlier messages were
// received, and the aggregators waited for them (bench/README.md,
// "external32 against native").
TEST_CASE("Runtime.PipelineLimit.ConvertedItemsFlyLikeZeroCopyOnes") {
  using flowio::runtime::pipeline_limit;
  using flowio::runtime::PipelineKind;
  CHECK(pipeline_limit(PipelineKind::client_converted, 3, 4) == 12);
  CHECK(pipeline_limit(PipelineKind::client_zero_copy, 3, 4) == 12);
  CHECK(pipeline_limit(PipelineKind::client_staged, 3, 4) == 3);
}
