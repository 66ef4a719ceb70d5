// Progress: the thread that drives outstanding MPI requests for the whole
// process and reports each group's completion, so that no worker thread
// waits inside MPI.
//
// MPICH advances communication only inside MPI calls; this thread makes
// those calls (MPI_Testall) while requests are outstanding and sleeps on a
// condition variable when there are none (and no poll is registered). It polls, yielding the core
// between polls, for 20 ms after the last completion or new request, then
// sleeps between polls with a growing back-off (capped at 200 us), so that a
// long wait for a slow peer does not burn a core.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace flowio::runtime {

// Thread safety: watch() may be called from any thread.
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

  // Calls poll() on the progress thread once per pass of its loop until it
  // returns PollResult::done. While a poll is registered the thread keeps
  // passing (with the back-off of a wait on requests, at most 200 us
  // between passes) instead of sleeping until a new request: a poll that
  // calls MPI there keeps MPICH serving other processes' one-sided
  // operations on this process's windows, which it does only inside MPI
  // calls. PollResult::busy counts as activity: the thread passes again at
  // once (yielding the core) rather than backing off. Used by sync/'s
  // locks (the home of a lock window; the one-sided algorithm's poll byte).
  enum class PollResult { idle, busy, done };
  using Poll = std::function<PollResult()>;
  void poll(Poll poll);

 private:
  struct Group {
    std::vector<MPI_Request> requests;
    std::vector<MPI_Status> statuses;
    Done done;
  };

  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::list<Group> incoming_;
  std::list<Poll> incoming_polls_;
  bool stopping_ = false;
  std::thread thread_;
};

// Completes `requests` on the calling thread (MPI_Waitall's contract), but
// yields the core between tests instead of spinning inside MPI: on an
// oversubscribed node the process this one waits for may need that core.
int wait_all_yielding(std::span<MPI_Request> requests, MPI_Status* statuses);

}  // namespace flowio::runtime
