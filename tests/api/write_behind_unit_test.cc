// WriteBehind (api/write_behind.h) as pure logic, with promises standing in
// for the engine: the budget makes a write wait for the oldest until its
// data fits (copied or not), an access waits only for the writes it
// meets, a failure is named after its write and reported once, and the
// hint's values.
#include "api/write_behind.h"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <utility>

#include "flowio/error.h"

namespace {

using flowio::WriteBehind;

struct Pending {
  flowio::Promise<std::size_t> promise;
  WriteBehind::Write write;
};

// A write of `bytes` over file bytes [begin, end), not yet done.
Pending pending(std::int64_t bytes, std::int64_t begin, std::int64_t end) {
  Pending made;
  made.write.done = made.promise.get_future();
  made.write.bytes = bytes;
  made.write.file_begin = begin;
  made.write.file_end = end;
  made.write.call = "write_at_all at offset " + std::to_string(begin);
  return made;
}

// Runs `wait` while another thread, standing in for the engine, ends
// `write` with `bytes` after 200 ms; returns how long `wait` took.
template <typename Wait>
double seconds_waiting(Pending& write, std::size_t bytes, Wait wait) {
  std::thread engine([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    write.promise.set_value(bytes);
  });
  const auto start = std::chrono::steady_clock::now();
  wait();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  engine.join();
  return seconds;
}

}  // namespace

TEST_CASE("Api.WriteBehindUnit.BudgetMakesAWriteWaitForTheOldest") {
  WriteBehind behind;
  CHECK_FALSE(behind.make_room(10));  // off
  behind.set_budget(100);
  CHECK_FALSE(behind.make_room(101));  // never fits
  REQUIRE(behind.make_room(60));
  Pending first = pending(60, 0, 60);
  behind.add(std::move(first.write));
  REQUIRE(behind.make_room(40));  // fits beside it: no wait
  Pending second = pending(40, 60, 100);
  behind.add(std::move(second.write));

  // 30 more do not fit until the first (the oldest) is done.
  bool fits = false;
  CHECK(seconds_waiting(first, 60, [&] { fits = behind.make_room(30); }) > 0.15);
  CHECK(fits);
  CHECK_FALSE(behind.idle());  // the second is still in flight
  second.promise.set_value(40);
  behind.drain();
  CHECK(behind.idle());
  CHECK(behind.take_failure() == nullptr);
}

// A durable write made no copy, but its data counts against the budget
// all the same (so that the writes waiting for their sync stay bounded),
// and is counted as a write behind without a copy.
TEST_CASE("Api.WriteBehindUnit.AWriteWithoutACopyCountsAgainstTheBudget") {
  WriteBehind behind;
  behind.set_budget(100);
  const WriteBehind::Counts before = WriteBehind::process_counts();
  REQUIRE(behind.make_room(80));
  Pending durable = pending(80, 0, 80);
  durable.write.without_copy = true;
  behind.add(std::move(durable.write));
  const WriteBehind::Counts added = WriteBehind::process_counts();
  CHECK(added.writes_behind - before.writes_behind == 1);
  CHECK(added.without_copy - before.without_copy == 1);

  bool fits = false;
  CHECK(seconds_waiting(durable, 80, [&] { fits = behind.make_room(30); }) > 0.15);
  CHECK(fits);
  CHECK(behind.idle());
}

TEST_CASE("Api.WriteBehindUnit.AnAccessWaitsOnlyForTheWritesItMeets") {
  WriteBehind behind;
  behind.set_budget(1000);
  Pending low = pending(100, 0, 100);
  Pending high = pending(100, 500, 600);
  behind.add(std::move(low.write));
  behind.add(std::move(high.write));
  high.promise.set_value(100);
  // [100, 500) meets neither: returns at once though `low` is not done.
  behind.wait_overlapping(100, 500);
  CHECK_FALSE(behind.idle());
  // [99, 100) meets `low`.
  CHECK(seconds_waiting(low, 100, [&] { behind.wait_overlapping(99, 100); }) > 0.15);
  CHECK(behind.idle());
}

TEST_CASE("Api.WriteBehindUnit.AFailureIsNamedAndReportedOnce") {
  WriteBehind behind;
  behind.set_budget(1000);
  Pending failing = pending(100, 4096, 4196);
  Pending after = pending(100, 0, 100);
  behind.add(std::move(failing.write));
  behind.add(std::move(after.write));
  failing.promise.set_exception(
      std::make_exception_ptr(flowio::IoError(flowio::ErrorCode::no_space, "pwrite", 28)));
  after.promise.set_exception(
      std::make_exception_ptr(flowio::IoError(flowio::ErrorCode::io, "pwrite", 5)));
  behind.drain();
  CHECK(behind.knows_failure());
  const std::exception_ptr failure = behind.take_failure();
  REQUIRE(failure != nullptr);
  try {
    std::rethrow_exception(failure);
  } catch (const flowio::IoError& error) {
    // The first failure kept, with its type, code and errno, named.
    CHECK(error.code() == flowio::ErrorCode::no_space);
    CHECK(error.system_errno() == 28);
    CHECK(error.message() == "a write behind (write_at_all at offset 4096) failed: pwrite");
  }
  CHECK(behind.take_failure() == nullptr);
  CHECK_FALSE(behind.knows_failure());
}

TEST_CASE("Api.WriteBehindUnit.TheHintIsAByteCount") {
  CHECK(flowio::write_behind_budget({{"flowio_write_behind", "0"}}) == 0);
  CHECK(flowio::write_behind_budget({{"flowio_write_behind", "33554432"}}) == 33554432);
  for (const char* bad : {"", "-1", "32M", "enable", "1 "}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(flowio::write_behind_budget({{"flowio_write_behind", bad}}),
                    flowio::UsageError);
  }
}
