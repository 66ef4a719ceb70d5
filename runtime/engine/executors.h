// The two executors of a collective operation's stages (stages/executor.h):
// where their waits go.
#pragma once

#include <mpi.h>

#include <functional>
#include <list>
#include <vector>

#include "runtime/engine/io_service.h"
#include "runtime/engine/progress.h"
#include "runtime/stages/executor.h"

namespace flowio::runtime {

// In the background: MPI requests to the progress thread, file I/O to the
// I/O thread. Thread safety: every method may be called from any thread.
class BackgroundExecutor final : public Executor {
 public:
  BackgroundExecutor(Progress& progress, IoService& io) : progress_(progress), io_(io) {}
  void wait_for(std::vector<MPI_Request> requests, Done done) override;
  void run_io(std::function<void()> io) override;

 private:
  Progress& progress_;
  IoService& io_;
};

// On the caller's thread (InlineGraphRunner tests the requests between
// stages). Used by one thread only, the caller's.
class InlineExecutor final : public Executor {
 public:
  void wait_for(std::vector<MPI_Request> requests, Done done) override;
  // File I/O runs at once, on the caller.
  void run_io(std::function<void()> io) override { io(); }

  // Tests every outstanding group once and runs the callbacks of those
  // complete; returns whether any completed.
  bool test();

 private:
  struct Group {
    std::vector<MPI_Request> requests;
    std::vector<MPI_Status> statuses;
    Done done;
  };
  std::list<Group> groups_;
};

}  // namespace flowio::runtime
