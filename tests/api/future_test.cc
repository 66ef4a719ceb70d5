// Futures without files, on one process: where continuations run (the
// continuation pool, the inline executor, a program's own executor),
// continuations that block, when_all and wait_all.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <latch>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "flowio/flowio.h"

namespace {

constexpr auto kDeadline = std::chrono::seconds(30);

// An executor that keeps tasks until the test runs them: shows that then()
// hands the continuation to the executor it names.
class HeldTasks final : public flowio::Executor {
 public:
  void execute(std::function<void()> task) override { tasks_.push_back(std::move(task)); }
  std::size_t held() const { return tasks_.size(); }
  void run_all() {
    while (!tasks_.empty()) {
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      task();
    }
  }

 private:
  std::deque<std::function<void()>> tasks_;
};

template <typename T>
flowio::Future<T> failed(const char* message) {
  return flowio::make_exception_future<T>(
      std::make_exception_ptr(flowio::IoError(flowio::ErrorCode::io, message, 5)));
}

}  // namespace

// By default a continuation runs on the continuation pool, not on the
// thread that completes the future.
TEST_CASE("Api.Future.ThenRunsOnTheContinuationPool") {
  flowio::Promise<int> promise;
  flowio::Future<std::thread::id> ran_on = promise.get_future().then([](flowio::Future<int> ready) {
    ready.get();
    return std::this_thread::get_id();
  });
  promise.set_value(1);
  REQUIRE(ran_on.wait_for(kDeadline));
  CHECK(ran_on.get() != std::this_thread::get_id());
}

// inline_executor() runs the continuation on the completing thread (here
// the one that fulfils the promise), or at once when the future is ready.
TEST_CASE("Api.Future.ThenInlineRunsOnTheCompletingThread") {
  flowio::Promise<int> promise;
  flowio::Future<std::thread::id> ran_on = promise.get_future().then(
      flowio::inline_executor(), [](flowio::Future<int>) { return std::this_thread::get_id(); });
  std::thread::id completer;
  std::thread([&] {
    completer = std::this_thread::get_id();
    promise.set_value(1);
  }).join();
  CHECK(ran_on.get() == completer);
  flowio::Future<std::thread::id> at_once = flowio::make_ready_future(2).then(
      flowio::inline_executor(), [](flowio::Future<int>) { return std::this_thread::get_id(); });
  CHECK(at_once.ready());
  CHECK(at_once.get() == std::this_thread::get_id());
}

// then(executor, f) hands the continuation to that executor, and only it.
TEST_CASE("Api.Future.ThenOnTheProgramsExecutor") {
  HeldTasks executor;
  flowio::Future<int> next = flowio::make_ready_future(20).then(
      executor, [](flowio::Future<int> ready) { return ready.get() + 1; });
  CHECK(executor.held() == 1);
  CHECK_FALSE(next.ready());
  executor.run_all();
  CHECK(next.get() == 21);
}

// A continuation may own what it captures alone (move-only captures).
TEST_CASE("Api.Future.ThenTakesMoveOnlyContinuations") {
  auto owned = std::make_unique<int>(7);
  flowio::Future<int> next = flowio::make_ready_future(6).then(
      [owned = std::move(owned)](flowio::Future<int> ready) { return ready.get() * *owned; });
  CHECK(next.get() == 42);
}

// Continuations that block do not starve one another: eight continuations
// that each wait until all eight are running at once complete (a pool of
// fewer threads would hang), and a continuation blocked on a future that
// another continuation, queued after it, completes is released.
TEST_CASE("Api.Future.BlockingContinuationsDoNotDeadlock") {
  constexpr int kTogether = 8;
  std::latch all_running(kTogether);
  std::vector<flowio::Future<void>> waiting;
  for (int i = 0; i < kTogether; ++i) {
    waiting.push_back(flowio::make_ready_future(i).then(
        [&all_running](flowio::Future<int>) { all_running.arrive_and_wait(); }));
  }
  for (flowio::Future<void>& future : waiting) REQUIRE(future.wait_for(kDeadline));

  flowio::Promise<int> first, second;
  flowio::Future<int> later =
      second.get_future().then([](flowio::Future<int> ready) { return ready.get() + 1; });
  flowio::Future<int> blocked = first.get_future().then(
      [&later](flowio::Future<int> ready) { return ready.get() + later.get(); });
  first.set_value(10);
  second.set_value(30);
  REQUIRE(blocked.wait_for(kDeadline));
  CHECK(blocked.get() == 41);
}

// wait_all returns every value in the order given.
TEST_CASE("Api.WhenAll.WaitAllCollectsInOrder") {
  std::vector<flowio::Promise<int>> promises(3);
  std::vector<flowio::Future<int>> futures;
  for (auto& promise : promises) futures.push_back(promise.get_future());
  std::thread completer([&] {
    for (int i = 2; i >= 0; --i) promises[static_cast<std::size_t>(i)].set_value(i * 10);
  });
  const std::vector<int> values = flowio::wait_all(std::move(futures));
  completer.join();
  CHECK(values == std::vector<int>{0, 10, 20});
  CHECK(flowio::wait_all(std::vector<flowio::Future<int>>{}).empty());
}

// With failures, wait_all and when_all rethrow the exception of the first
// failed future in the order given, and only once every future is ready.
TEST_CASE("Api.WhenAll.FirstErrorInOrderAfterAllComplete") {
  flowio::Promise<int> last;
  std::vector<flowio::Future<int>> futures;
  futures.push_back(flowio::make_ready_future(1));
  futures.push_back(failed<int>("second"));
  futures.push_back(failed<int>("third"));
  futures.push_back(last.get_future());
  flowio::Future<std::vector<int>> all = flowio::when_all(std::move(futures));
  CHECK_FALSE(all.ready());
  last.set_value(4);
  REQUIRE(all.wait_for(kDeadline));
  try {
    all.get();
    FAIL("when_all succeeded with failed inputs");
  } catch (const flowio::IoError& error) {
    CHECK(error.message() == "second");
  }

  std::vector<flowio::Future<void>> voids;
  voids.push_back(flowio::make_ready_future());
  voids.push_back(failed<void>("void second"));
  try {
    flowio::wait_all(std::move(voids));
    FAIL("wait_all succeeded with a failed input");
  } catch (const flowio::IoError& error) {
    CHECK(error.message() == "void second");
  }
}

// when_all is ready once its inputs are, at once for none, and may be
// continued like any future.
TEST_CASE("Api.WhenAll.WhenAllIsAFuture") {
  CHECK(flowio::when_all(std::vector<flowio::Future<int>>{}).get().empty());
  std::vector<flowio::Promise<void>> promises(2);
  std::vector<flowio::Future<void>> futures;
  for (auto& promise : promises) futures.push_back(promise.get_future());
  std::atomic<bool> continued{false};
  flowio::Future<void> after =
      flowio::when_all(std::move(futures)).then([&](flowio::Future<void> all) {
        all.get();
        continued = true;
      });
  promises[1].set_value();
  CHECK_FALSE(after.ready());
  promises[0].set_value();
  REQUIRE(after.wait_for(kDeadline));
  after.get();
  CHECK(continued);
}
