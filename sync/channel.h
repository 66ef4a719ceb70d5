// Channel: one lock algorithm's private communicator (a duplicate, so its
// messages never meet the application's or another lock's), and the count
// of its MPI operations in flight, which close() waits for.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

#include "sync/progress_port.h"

namespace flowio::sync {

// What a failed step of a lock algorithm hands on: null for MPI_SUCCESS,
// else an MpiError with `code` whose message is `what` (the step).
std::exception_ptr mpi_failure(int code, const char* what);

// Thread safety: watch() and poll() from any thread; close() from one.
class Channel {
 public:
  // Collective over `comm`: duplicates it. Throws MpiError.
  Channel(MPI_Comm comm, ProgressPort& progress);
  // Frees the communicator (MPI_Comm_free, which does not synchronize).
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  MPI_Comm comm() const { return comm_; }
  // Whether every process runs on one node (MPI_Comm_split_type), so
  // that lock words can live in shared memory (lock_window.h). The
  // environment variable FLOWIO_LOCK_WINDOWS=mpi makes it false, to test
  // and measure the path between nodes on one.
  bool shares_memory() const { return shares_memory_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  ProgressPort& progress() const { return progress_; }

  // Hands `requests` to the progress thread; done(code) runs there (or at
  // once, for an empty group) with MPI_SUCCESS or MPI's error code. The
  // group counts as in flight until done returns.
  void watch(std::vector<MPI_Request> requests, std::function<void(int)> done);
  // The same, but it first tests the group here, once on the progress
  // thread and back to back for up to 20 us elsewhere (the runtime's
  // blocking waits do the same before they yield): a group already done
  // (shared-memory operations) or that the target answers at once then
  // completes, and done runs, on this thread, without a hand-off to the
  // progress thread and back (two thread wake-ups, which cost more than the
  // operation on a loaded node).
  void watch_or_test(std::vector<MPI_Request> requests, std::function<void(int)> done);
  // Registers a poll with the progress thread (ProgressPort::poll); it
  // counts as in flight until it returns done.
  void poll(ProgressPort::Poll poll);

  // Collective. Waits on this thread until every watch and poll of this
  // process has finished, then until every process has got so far (an
  // MPI_Ibarrier that the progress thread completes): after it no process
  // sends or targets another on this channel any more.
  void quiesce();

 private:
  void finished();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool shares_memory_ = false;
  ProgressPort& progress_;
  std::mutex mutex_;
  std::condition_variable quiet_;
  std::size_t in_flight_ = 0;
};

}  // namespace flowio::sync
