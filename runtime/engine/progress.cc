#include "runtime/engine/progress.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "flowio/error.h"
#include "runtime/engine/backoff.h"
#include "runtime/engine/clock.h"

namespace flowio::runtime {
namespace {

int make_eventfd() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw_errno(errno, "eventfd for the progress thread");
  return fd;
}

void drain(int fd) {
  std::uint64_t count = 0;
  // Nonblocking: nothing to read is not an error, only nothing to do.
  [[maybe_unused]] const ssize_t got = ::read(fd, &count, sizeof count);
}

}  // namespace

Progress::Progress() : wake_fd_(make_eventfd()), thread_([this] { run(); }) {}

Progress::~Progress() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake();
  thread_.join();
  ::close(wake_fd_);
}

void Progress::wake() {
  const std::uint64_t one = 1;
  // Cannot fail short of a counter overflow, which a pending wake-up
  // makes harmless anyway.
  [[maybe_unused]] const ssize_t put = ::write(wake_fd_, &one, sizeof one);
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
  wake();
}

void Progress::poll(Poll poll) {
  {
    std::lock_guard lock(mutex_);
    incoming_polls_.push_back(std::move(poll));
  }
  wake();
}

void Progress::watch_descriptor(int fd, std::function<void()> readable) {
  {
    std::lock_guard lock(mutex_);
    descriptors_.push_back(Descriptor{fd, std::move(readable)});
    ++descriptors_version_;
  }
  wake();
}

void Progress::forget_descriptor(int fd) {
  std::unique_lock lock(mutex_);
  std::erase_if(descriptors_, [fd](const Descriptor& d) { return d.fd == fd; });
  ++descriptors_version_;
  // The loop round under way may still hold the old list; the next one
  // does not.
  const std::uint64_t round = loops_;
  lock.unlock();
  wake();
  lock.lock();
  loop_done_.wait(lock, [&] { return loops_ > round || stopping_; });
}

std::int64_t Progress::cpu_ns() const {
  clockid_t clock;
  if (pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &clock) != 0) {
    return 0;
  }
  timespec used{};
  clock_gettime(clock, &used);
  return std::int64_t{used.tv_sec} * 1'000'000'000 + used.tv_nsec;
}

void Progress::run() {
  std::list<Group> active;
  std::list<Poll> polls;
  std::vector<Descriptor> descriptors;
  std::uint64_t seen_version = ~std::uint64_t{0};
  std::vector<pollfd> polled;
  // Since when nothing has completed: the back-off grows with it.
  std::int64_t quiet_since = now_ns();
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      ++loops_;
      loop_done_.notify_all();
      if (stopping_) return;
      if (!incoming_.empty() || !incoming_polls_.empty()) quiet_since = now_ns();
      active.splice(active.end(), incoming_);
      polls.splice(polls.end(), incoming_polls_);
      if (seen_version != descriptors_version_) {
        descriptors = descriptors_;
        seen_version = descriptors_version_;
      }
    }
    for (auto group = active.begin(); group != active.end();) {
      int flag = 0;
      const int code = MPI_Testall(static_cast<int>(group->requests.size()), group->requests.data(),
                                   &flag, group->statuses.data());
      if (flag || code != MPI_SUCCESS) {
        group->done(code, group->statuses);
        group = active.erase(group);
        quiet_since = now_ns();
      } else {
        ++group;
      }
    }
    for (auto poll = polls.begin(); poll != polls.end();) {
      const PollResult result = (*poll)();
      if (result != PollResult::idle) quiet_since = now_ns();
      poll = result == PollResult::done ? polls.erase(poll) : std::next(poll);
    }
    const std::int64_t pause_ns =
        active.empty() && polls.empty() ? -1 : Backoff::pause_ns(now_ns() - quiet_since);
    if (pause_ns == 0) continue;
    polled.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const Descriptor& descriptor : descriptors) {
      polled.push_back(pollfd{descriptor.fd, POLLIN, 0});
    }
    // poll's timeout is in milliseconds; shorter pauses sleep instead,
    // after a poll that does not wait, so that work already signalled is
    // seen first.
    const bool sleep_finely = pause_ns > 0 && pause_ns < 1'000'000;
    const int timeout_ms = pause_ns < 0   ? -1
                           : sleep_finely ? 0
                                          : static_cast<int>(pause_ns / 1'000'000);
    int ready = ::poll(polled.data(), polled.size(), timeout_ms);
    if (ready == 0 && sleep_finely) {
      Backoff::pause(pause_ns);
      ready = ::poll(polled.data(), polled.size(), 0);
    }
    if (ready <= 0) continue;
    if (polled[0].revents & POLLIN) drain(wake_fd_);
    for (std::size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents & POLLIN) {
        descriptors[i - 1].readable();
        quiet_since = now_ns();
      }
    }
  }
}

int wait_all_on_caller(std::span<MPI_Request> requests, MPI_Status* statuses) {
  // The clock is read once every kTestsPerClockRead tests while the wait
  // is short: a clock read costs as much as a test here (30-80 ns on these
  // virtual machines), and a small call's messages are in after a few
  // tests. Once the back-off pauses, each test is followed by a pause
  // whose length needs the clock anyway.
  constexpr int kTestsPerClockRead = 16;
  std::int64_t started = -1;
  int untimed = 0;
  for (;;) {
    int flag = 0;
    const int code =
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, statuses);
    if (flag || code != MPI_SUCCESS) return code;
    if (++untimed < kTestsPerClockRead) continue;
    untimed = 0;
    const std::int64_t now = now_ns();
    if (started < 0) {
      started = now;
      continue;
    }
    const std::int64_t pause_ns = Backoff::pause_ns(now - started);
    if (pause_ns > 0) {
      Backoff::pause(pause_ns);
      untimed = kTestsPerClockRead - 1;
    }
  }
}

}  // namespace flowio::runtime
