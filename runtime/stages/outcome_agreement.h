// The agree stage of a collective operation: every process learns whether
// the operation failed anywhere, and if so the error of the lowest failing
// rank, so that every process's future completes alike.
//
// Point to point, with the operation's own tag. Unlike a collective call,
// these messages need no common order, so operations in flight may agree
// in whatever order they finish. Up to kMostAllToAllRanks processes, each
// sends its verdict to every other and decides from all of them (one
// message latency); more send theirs to rank 0, which replies with the
// outcome (two latencies, as an MPI_Allreduce on a few processes, and 2(n-1)
// messages instead of n(n-1)). Every process of a file has the same number
// of processes, so all use the same form.
#pragma once

#include <mpi.h>

#include <array>
#include <exception>
#include <memory>
#include <vector>

namespace flowio::runtime {

// One operation's agreement. Used by one thread at a time; its buffers
// live here until the requests complete.
class OutcomeAgreement {
 public:
  static constexpr int kMostAllToAllRanks = 8;

  // Posts this process's first step: all to all, the sends and receives of
  // every verdict; else a non-root sends its verdict and posts the receive
  // of the outcome, the root posts the receives of every verdict. `stage`
  // names where `local_failure` happened (or is null); the other
  // processes' errors name it.
  std::vector<MPI_Request> post(MPI_Comm comm, int tag, int rank, int ranks,
                                std::exception_ptr local_failure, const char* stage = nullptr);
  // Once the first step's requests are complete: all to all, decides;
  // else on the root, decides and sends the outcome to every other
  // process (the returned requests); elsewhere nothing to do.
  std::vector<MPI_Request> reply();
  // Once every request has completed: null, or the exception every process
  // reports alike, this one included: of the class of the failure of the
  // lowest failing rank (with its errno and MPI code), its message naming
  // that rank and the stage.
  std::exception_ptr outcome(const char* operation) const;

 private:
  // What travels: the lowest failing rank (or -1) and its failure, the
  // message cut to fit.
  struct Verdict {
    int failed_rank = -1;
    int code = 0;
    int system_errno = 0;
    int mpi_code = 0;
    char message[496];
  };

  // This process's verdict and the one agreed, made by post() (in the
  // heap: most operations never agree, and the phase holding this moves).
  struct OwnVerdicts {
    Verdict mine;
    Verdict outcome;
  };

  MPI_Comm comm_ = MPI_COMM_NULL;
  int tag_ = 0;
  int rank_ = 0;
  int ranks_ = 1;
  std::exception_ptr local_failure_;
  std::unique_ptr<OwnVerdicts> own_;
  std::vector<Verdict> verdicts_;  // root: one per rank
};

}  // namespace flowio::runtime
