// Progress: the process's progress engine, one thread that drives
// everything flowio waits for outside its own code: outstanding MPI
// requests, and descriptors that signal completions elsewhere (the eventfd
// of an io_uring ring, lock notifications). It reports each completion
// through a callback, so that no worker thread waits inside MPI or the
// kernel.
//
// MPICH advances communication only inside MPI calls; this thread makes
// those calls (MPI_Testall) while requests are outstanding, pausing
// between tests by the proportional back-off of backoff.h, in a poll(2) on
// its descriptors so that new work or a completion wakes it at once. With
// nothing outstanding (and no poll registered, see poll()) it blocks in
// poll without a timeout: an idle engine uses no CPU.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace flowio::runtime {

// Thread safety: every method may be called from any thread.
class Progress {
 public:
  Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Stops the thread; outstanding groups are abandoned (their callbacks
  // never run), so callers wait for their groups before letting go.
  ~Progress();

  // Calls done(MPI_SUCCESS, statuses) on the progress thread once every
  // request of the group has completed, or done(error code, statuses) if
  // MPI reports an error. An empty group completes at once, on the calling
  // thread.
  using Done = std::function<void(int, std::span<const MPI_Status>)>;
  void watch(std::vector<MPI_Request> requests, Done done);

  // Calls `readable` on the progress thread each time `fd` becomes
  // readable, until forget_descriptor(fd) returns. `readable` must consume
  // what made it readable (read the eventfd), or it is called again at
  // once.
  void watch_descriptor(int fd, std::function<void()> readable);
  // After this returns, the callback of `fd` is not running and never runs
  // again. Must not be called from the progress thread.
  void forget_descriptor(int fd);

  // Calls poll() on the progress thread once per round of its loop until
  // it returns PollResult::done. While a poll is registered the thread
  // keeps going round (pausing by the back-off, at most 500 us) instead of
  // blocking until new work: a poll that calls MPI there keeps MPICH
  // serving other processes' one-sided operations on this process's
  // windows, which it does only inside MPI calls. PollResult::busy counts
  // as a sign of progress: the back-off starts again from zero. Used by
  // sync/'s locks (the home of a lock whose words are reached through MPI
  // one-sided operations; the one-sided algorithm's polled hand-off).
  enum class PollResult { idle, busy, done };
  using Poll = std::function<PollResult()>;
  void poll(Poll poll);

  // CPU time the progress thread has used since it started, in
  // nanoseconds (CLOCK_THREAD_CPUTIME_ID of the thread).
  std::int64_t cpu_ns() const;

 private:
  struct Group {
    std::vector<MPI_Request> requests;
    std::vector<MPI_Status> statuses;
    Done done;
  };
  struct Descriptor {
    int fd;
    std::function<void()> readable;
  };

  void run();
  void wake();

  const int wake_fd_;  // an eventfd: written to wake the thread from poll
  mutable std::mutex mutex_;
  std::condition_variable loop_done_;  // signalled when loops_ grows
  std::list<Group> incoming_;
  std::list<Poll> incoming_polls_;
  std::vector<Descriptor> descriptors_;
  std::uint64_t descriptors_version_ = 0;  // changes with descriptors_
  std::uint64_t loops_ = 0;                // rounds of the thread's loop, for forget_descriptor
  bool stopping_ = false;
  std::thread thread_;
};

// Completes `requests` on the calling thread (MPI_Waitall's contract),
// pausing between tests by the back-off of backoff.h instead of spinning
// inside MPI: on an oversubscribed node the process this one waits for
// may need the core.
int wait_all_on_caller(std::span<MPI_Request> requests, MPI_Status* statuses);

}  // namespace flowio::runtime
