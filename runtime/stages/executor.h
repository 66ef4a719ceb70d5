// Executor: where the stages of a collective operation wait. The stages
// are the same whoever runs them; what differs is where their waits go
// (engine/executors.h has the two executors):
//
//   background  MPI requests to the progress thread, file I/O to the I/O
//               thread; the stages run on oneTBB workers.
//   inline      a blocking call alone on its file: everything on the
//               caller's thread, which tests its own requests between
//               stages, so no thread hands work to another.
//
// A wait never blocks the thread that asks for it: `done` runs later (or
// at once, when the executor can tell the work is already complete).
#pragma once

#include <mpi.h>

#include <functional>
#include <span>
#include <vector>

namespace flowio::runtime {

class Executor {
 public:
  // Called once with the first error code (or MPI_SUCCESS) and the
  // requests' statuses.
  using Done = std::function<void(int code, std::span<const MPI_Status> statuses)>;

  virtual ~Executor() = default;
  // Calls done(code, statuses) once every request has completed.
  virtual void wait_for(std::vector<MPI_Request> requests, Done done) = 0;
  // Runs `io` (file I/O; it must not throw) where file I/O belongs.
  virtual void run_io(std::function<void()> io) = 0;
};

}  // namespace flowio::runtime
