// CallOrderGate alone: passes in sequence order whatever the arrival
// order, from several threads at once.
#include "runtime/call_order_gate.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

using flowio::runtime::CallOrderGate;

// Arrivals in a shuffled order pass in sequence order.
TEST_CASE("Runtime.CallOrderGate.PassesInSequenceOrder") {
  CallOrderGate gate;
  std::vector<std::uint64_t> order(50);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  std::vector<std::uint64_t> passed;
  for (std::uint64_t sequence : order) {
    gate.arrive(sequence, [&passed, sequence] { passed.push_back(sequence); });
  }
  REQUIRE(passed.size() == 50);
  for (std::uint64_t i = 0; i < 50; ++i) CHECK(passed[i] == i);
}

// Arrivals from four threads at once still pass one at a time, in order.
TEST_CASE("Runtime.CallOrderGate.ManyThreads") {
  CallOrderGate gate;
  std::mutex mutex;
  std::vector<std::uint64_t> passed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t sequence = static_cast<std::uint64_t>(t); sequence < 400; sequence += 4) {
        gate.arrive(sequence, [&, sequence] {
          std::lock_guard lock(mutex);
          passed.push_back(sequence);
        });
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  REQUIRE(passed.size() == 400);
  for (std::uint64_t i = 0; i < 400; ++i) CHECK(passed[i] == i);
}

// pass_through takes a turn with nothing to run: at once when it is next,
// otherwise in order; either way the operations after it pass.
TEST_CASE("Runtime.CallOrderGate.PassThroughTakesItsTurn") {
  CallOrderGate gate;
  std::vector<std::uint64_t> passed;
  gate.pass_through(0);
  gate.arrive(2, [&passed] { passed.push_back(2); });
  CHECK(passed.empty());
  gate.pass_through(1);
  CHECK(passed == std::vector<std::uint64_t>{2});
  gate.arrive(3, [&passed] { passed.push_back(3); });
  CHECK(passed == std::vector<std::uint64_t>{2, 3});
}
