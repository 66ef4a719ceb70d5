#include "runtime/progress.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "runtime/clock.h"

namespace flowio::runtime {
namespace {

constexpr std::int64_t kPollingNanoseconds = 20'000'000;
// A wait on the caller tests back to back this long before it starts
// yielding: most collective steps of a small call complete within it, and
// a yield costs a system call each time.
constexpr std::int64_t kTestWithoutYieldNanoseconds = 20'000;

}  // namespace

Progress::Progress() : thread_([this] { run(); }) {}

Progress::~Progress() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Progress::watch(std::vector<MPI_Request> requests, Done done) {
  if (requests.empty()) {
    done(MPI_SUCCESS, {});
    return;
  }
  std::vector<MPI_Status> statuses(requests.size());
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(Group{std::move(requests), std::move(statuses), std::move(done)});
  }
  wake_.notify_one();
}

void Progress::poll(Poll poll) {
  {
    std::lock_guard lock(mutex_);
    incoming_polls_.push_back(std::move(poll));
  }
  wake_.notify_one();
}

void Progress::run() {
  using std::chrono::microseconds;
  std::list<Group> active;
  std::list<Poll> polls;
  // While requests are outstanding MPI needs to be called often: large
  // messages move in fragments, each waiting for the next poll. So the
  // thread polls (yielding the core between polls) for a while after the
  // last sign of activity, and only then backs off into short sleeps.
  std::int64_t last_activity = now_ns();
  int sleeps = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      auto woken = [this] { return stopping_ || !incoming_.empty() || !incoming_polls_.empty(); };
      if (active.empty() && polls.empty()) {
        wake_.wait(lock, woken);
      } else if (now_ns() - last_activity > kPollingNanoseconds) {
        const auto pause = microseconds(std::min(200, 5 << std::min(sleeps++, 6)));
        wake_.wait_for(lock, pause, woken);
      }
      if (stopping_) return;
      if (!incoming_.empty() || !incoming_polls_.empty()) {
        last_activity = now_ns();
        sleeps = 0;
      }
      active.splice(active.end(), incoming_);
      polls.splice(polls.end(), incoming_polls_);
    }
    for (auto group = active.begin(); group != active.end();) {
      int flag = 0;
      const int code = MPI_Testall(static_cast<int>(group->requests.size()), group->requests.data(),
                                   &flag, group->statuses.data());
      if (flag || code != MPI_SUCCESS) {
        group->done(code, group->statuses);
        group = active.erase(group);
        last_activity = now_ns();
        sleeps = 0;
      } else {
        ++group;
      }
    }
    for (auto poll = polls.begin(); poll != polls.end();) {
      const PollResult result = (*poll)();
      if (result != PollResult::idle) {
        last_activity = now_ns();
        sleeps = 0;
      }
      poll = result == PollResult::done ? polls.erase(poll) : std::next(poll);
    }
    if (now_ns() - last_activity <= kPollingNanoseconds) sched_yield();
  }
}

int wait_all_yielding(std::span<MPI_Request> requests, MPI_Status* statuses) {
  const std::int64_t started = now_ns();
  for (;;) {
    int flag = 0;
    const int code =
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, statuses);
    if (flag || code != MPI_SUCCESS) return code;
    if (now_ns() - started > kTestWithoutYieldNanoseconds) sched_yield();
  }
}

}  // namespace flowio::runtime
