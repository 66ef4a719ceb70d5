// Executor: how a collective operation's stages wait. The stages of the
// graph (collective_stages.h) are the same whoever runs them; what differs
// is where their waits go.
//
//   background  MPI requests to the progress engine, file I/O to the I/O
//               thread; the stages run on oneTBB workers (TbbGraphRunner).
//   inline      a blocking call alone on its file: everything on the
//               caller's thread (InlineGraphRunner), which tests its own
//               requests between stages, so no thread hands work to
//               another.
//
// A wait never blocks the thread that asks for it: `done` runs later (or
// at once, when the executor can tell the work is already complete).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <vector>

#include "runtime/io_service.h"
#include "runtime/progress.h"

namespace flowio::runtime {

class Executor {
 public:
  virtual ~Executor() = default;
  // Calls done(code, statuses) once every request has completed.
  virtual void wait_for(std::vector<MPI_Request> requests, Progress::Done done) = 0;
  // Runs `io` (file I/O; it must not throw) where file I/O belongs.
  virtual void run_io(std::function<void()> io) = 0;
};

// Thread safety: every method may be called from any thread.
class BackgroundExecutor final : public Executor {
 public:
  BackgroundExecutor(Progress& progress, IoService& io) : progress_(progress), io_(io) {}
  void wait_for(std::vector<MPI_Request> requests, Progress::Done done) override;
  void run_io(std::function<void()> io) override;

 private:
  Progress& progress_;
  IoService& io_;
};

// Used by one thread only, the caller's.
class InlineExecutor final : public Executor {
 public:
  void wait_for(std::vector<MPI_Request> requests, Progress::Done done) override;
  // File I/O runs at once, on the caller.
  void run_io(std::function<void()> io) override { io(); }

  // Tests every outstanding group once and runs the callbacks of those
  // complete; returns whether any completed.
  bool test();
  bool idle() const { return groups_.empty(); }

 private:
  struct Group {
    std::vector<MPI_Request> requests;
    std::vector<MPI_Status> statuses;
    Progress::Done done;
  };
  std::list<Group> groups_;
};

}  // namespace flowio::runtime
