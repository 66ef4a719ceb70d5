// DataPhaseScheduler alone: starts in call order, lets operations that
// cannot interfere run side by side, holds back those that can until the
// earlier one finishes.
#include "runtime/data_phase_scheduler.h"

#include <doctest/doctest.h>

#include <functional>
#include <vector>

using flowio::runtime::DataFootprint;
using flowio::runtime::DataPhaseScheduler;

namespace {

DataFootprint footprint(bool writing, std::int64_t begin, std::int64_t end,
                        bool alltoallw = false) {
  return DataFootprint{writing, alltoallw, begin, end};
}

void ready(DataPhaseScheduler& scheduler, std::uint64_t sequence, DataFootprint footprint,
           std::function<void()> start) {
  scheduler.ready(sequence, footprint, std::move(start));
}

}  // namespace

// Reads of the same bytes, and writes of disjoint bytes, start at once.
TEST_CASE("Runtime.DataPhaseScheduler.DisjointOrReadOnlyRunSideBySide") {
  DataPhaseScheduler scheduler;
  std::vector<int> started;
  ready(scheduler, 0, footprint(false, 0, 100), [&] { started.push_back(0); });
  ready(scheduler, 1, footprint(false, 50, 150), [&] { started.push_back(1); });
  ready(scheduler, 2, footprint(true, 200, 300), [&] { started.push_back(2); });
  CHECK(started == std::vector<int>{0, 1, 2});
}

// A write meeting a running operation waits for it; later operations wait
// behind it (call order), even when they could run.
TEST_CASE("Runtime.DataPhaseScheduler.InterferingWaitsAndKeepsOrder") {
  DataPhaseScheduler scheduler;
  std::vector<int> started;
  ready(scheduler, 0, footprint(true, 0, 100), [&] { started.push_back(0); });
  ready(scheduler, 1, footprint(false, 90, 120), [&] { started.push_back(1); });
  ready(scheduler, 2, footprint(true, 500, 600), [&] { started.push_back(2); });
  CHECK(started == std::vector<int>{0});
  scheduler.finished(0);
  CHECK(started == std::vector<int>{0, 1, 2});
}

// An operation ready before its predecessor waits for it to be ready.
TEST_CASE("Runtime.DataPhaseScheduler.StartsInCallOrder") {
  DataPhaseScheduler scheduler;
  std::vector<int> started;
  ready(scheduler, 1, footprint(false, 0, 10), [&] { started.push_back(1); });
  CHECK(started.empty());
  ready(scheduler, 0, footprint(false, 20, 30), [&] { started.push_back(0); });
  CHECK(started == std::vector<int>{0, 1});
}

// Two Alltoallw operations never overlap (their rounds are collective
// calls posted in one order); an empty footprint interferes with nothing.
TEST_CASE("Runtime.DataPhaseScheduler.AlltoallwSerialisedEmptyFree") {
  DataPhaseScheduler scheduler;
  std::vector<int> started;
  ready(scheduler, 0, footprint(false, 0, 10, true), [&] { started.push_back(0); });
  ready(scheduler, 1, footprint(false, 20, 30, true), [&] { started.push_back(1); });
  ready(scheduler, 2, DataFootprint{}, [&] { started.push_back(2); });
  CHECK(started == std::vector<int>{0});
  scheduler.finished(0);
  CHECK(started == std::vector<int>{0, 1, 2});
}

// A start that finishes its own operation at once (no data phase) lets the
// next one start too.
TEST_CASE("Runtime.DataPhaseScheduler.FinishInsideStart") {
  DataPhaseScheduler scheduler;
  std::vector<int> started;
  ready(scheduler, 0, footprint(true, 0, 10), [&] {
    started.push_back(0);
    scheduler.finished(0);
  });
  ready(scheduler, 1, footprint(true, 0, 10), [&] { started.push_back(1); });
  CHECK(started == std::vector<int>{0, 1});
}

// A skipped operation (its gather was the whole protocol) takes its turn:
// at once when it is next, otherwise when its predecessors have started,
// and then lets its successors start; it never holds anyone back, not even
// an operation whose sequence number shares its message tags.
TEST_CASE("Runtime.DataPhaseScheduler.SkippedOperationsTakeTheirTurn") {
  DataPhaseScheduler scheduler;
  std::vector<int> started;
  scheduler.skip(0);
  ready(scheduler, 2, footprint(true, 0, 10), [&] { started.push_back(2); });
  CHECK(started.empty());
  scheduler.skip(1);
  CHECK(started == std::vector<int>{2});
  scheduler.finished(2);
  for (std::uint64_t sequence = 3; sequence < 256; ++sequence) scheduler.skip(sequence);
  ready(scheduler, 256, footprint(true, 0, 10), [&] { started.push_back(256); });
  CHECK(started == std::vector<int>{2, 256});
}
