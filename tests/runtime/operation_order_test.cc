// OperationOrder alone: sequence numbers in call order, never a number
// whose tag bits a live operation holds; data phases started in call order,
// side by side unless they interfere.
#include "runtime/engine/operation_order.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using flowio::runtime::DataFootprint;
using flowio::runtime::kSequencesApart;
using flowio::runtime::OperationOrder;

namespace {

DataFootprint footprint(bool writing, std::int64_t begin, std::int64_t end,
                        bool alltoallw = false) {
  return DataFootprint{writing, alltoallw, begin, end};
}

// Begins `count` operations and returns their numbers.
std::vector<std::uint64_t> begin(OperationOrder& order, int count) {
  std::vector<std::uint64_t> sequences;
  for (int i = 0; i < count; ++i) sequences.push_back(order.begin().sequence);
  return sequences;
}

}  // namespace

// Numbers come in call order; an operation is alone when none is live.
TEST_CASE("Runtime.OperationOrder.NumbersInCallOrder") {
  OperationOrder order;
  for (std::uint64_t expected = 0; expected < 3 * kSequencesApart; ++expected) {
    const OperationOrder::Turn turn = order.begin();
    CHECK(turn.sequence == expected);
    CHECK(turn.alone);
    order.data_phase_ready(turn.sequence, DataFootprint{}, [] {});
    order.end(turn.sequence);
  }
  CHECK(order.idle());
  const OperationOrder::Turn first = order.begin();
  CHECK_FALSE(order.begin().alone);
  (void)first;
}

// With kSequencesApart operations live, the next one (the same tag bits as
// the oldest) waits until the oldest ends, and only that one.
TEST_CASE("Runtime.OperationOrder.WaitsForTheOperationWithTheSameTags") {
  OperationOrder order;
  begin(order, static_cast<int>(kSequencesApart));
  for (std::uint64_t s = 0; s < kSequencesApart; ++s) {
    order.data_phase_ready(s, DataFootprint{}, [] {});
  }
  // Ending others than the oldest does not let it through.
  order.end(1);
  order.end(kSequencesApart - 1);
  std::atomic<bool> taken{false};
  std::uint64_t sequence = 0;
  std::thread caller([&] {
    sequence = order.begin().sequence;
    taken = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(taken.load());
  order.end(0);
  caller.join();
  CHECK(taken.load());
  CHECK(sequence == kSequencesApart);
  // Its successor's bits (those of operation 1) were freed already.
  CHECK(order.begin().sequence == kSequencesApart + 1);
}

// Reads of the same bytes, and writes of disjoint bytes, start at once.
TEST_CASE("Runtime.OperationOrder.DisjointOrReadOnlyRunSideBySide") {
  OperationOrder order;
  begin(order, 3);
  std::vector<int> started;
  order.data_phase_ready(0, footprint(false, 0, 100), [&] { started.push_back(0); });
  order.data_phase_ready(1, footprint(false, 50, 150), [&] { started.push_back(1); });
  order.data_phase_ready(2, footprint(true, 200, 300), [&] { started.push_back(2); });
  CHECK(started == std::vector<int>{0, 1, 2});
}

// A write waits for an earlier operation it overlaps, and later ones wait
// behind it (starts keep call order).
TEST_CASE("Runtime.OperationOrder.InterferingWaitsAndKeepsOrder") {
  OperationOrder order;
  begin(order, 3);
  std::vector<int> started;
  order.data_phase_ready(0, footprint(true, 0, 100), [&] { started.push_back(0); });
  order.data_phase_ready(1, footprint(false, 90, 120), [&] { started.push_back(1); });
  order.data_phase_ready(2, footprint(true, 500, 600), [&] { started.push_back(2); });
  CHECK(started == std::vector<int>{0});
  order.end(0);
  CHECK(started == std::vector<int>{0, 1, 2});
}

// An operation ready before its predecessor waits for it to be ready.
TEST_CASE("Runtime.OperationOrder.StartsInCallOrder") {
  OperationOrder order;
  begin(order, 2);
  std::vector<int> started;
  order.data_phase_ready(1, footprint(false, 0, 10), [&] { started.push_back(1); });
  CHECK(started.empty());
  order.data_phase_ready(0, footprint(false, 20, 30), [&] { started.push_back(0); });
  CHECK(started == std::vector<int>{0, 1});
}

// Two Alltoallw operations never overlap (their rounds are collective
// calls posted in one order); an empty footprint interferes with nothing.
TEST_CASE("Runtime.OperationOrder.AlltoallwSerialisedEmptyFree") {
  OperationOrder order;
  begin(order, 3);
  std::vector<int> started;
  order.data_phase_ready(0, footprint(false, 0, 10, true), [&] { started.push_back(0); });
  order.data_phase_ready(1, footprint(false, 20, 30, true), [&] { started.push_back(1); });
  order.data_phase_ready(2, DataFootprint{}, [&] { started.push_back(2); });
  CHECK(started == std::vector<int>{0});
  order.end(0);
  CHECK(started == std::vector<int>{0, 1, 2});
}

// A start that ends its own operation at once (no data phase) lets the
// next one start too.
TEST_CASE("Runtime.OperationOrder.EndInsideStart") {
  OperationOrder order;
  begin(order, 2);
  std::vector<int> started;
  order.data_phase_ready(0, footprint(true, 0, 10), [&] {
    started.push_back(0);
    order.end(0);
  });
  order.data_phase_ready(1, footprint(true, 0, 10), [&] { started.push_back(1); });
  CHECK(started == std::vector<int>{0, 1});
}

// An operation that could not start takes its turn without holding anyone
// back, and frees its tags.
TEST_CASE("Runtime.OperationOrder.AbandonedOperationTakesItsTurn") {
  OperationOrder order;
  begin(order, 3);
  std::vector<int> started;
  order.data_phase_ready(2, footprint(true, 0, 10), [&] { started.push_back(2); });
  order.data_phase_ready(0, footprint(false, 100, 110), [&] { started.push_back(0); });
  CHECK(started == std::vector<int>{0});
  order.abandon(1);
  CHECK(started == std::vector<int>{0, 2});
}

// Data phases made ready from several threads at once start one at a
// time, in order.
TEST_CASE("Runtime.OperationOrder.ManyThreads") {
  // As many as may be live at once (begin() waits beyond them).
  constexpr std::uint64_t kOperations = kSequencesApart;
  OperationOrder order;
  begin(order, static_cast<int>(kOperations));
  std::mutex mutex;
  std::vector<std::uint64_t> started;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t s = static_cast<std::uint64_t>(t); s < kOperations; s += 4) {
        order.data_phase_ready(s, DataFootprint{}, [&, s] {
          std::lock_guard lock(mutex);
          started.push_back(s);
        });
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  REQUIRE(started.size() == kOperations);
  for (std::uint64_t i = 0; i < kOperations; ++i) CHECK(started[i] == i);
}
