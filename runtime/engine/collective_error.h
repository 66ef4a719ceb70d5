// Agreeing on the outcome of a collective step: if any rank failed, every
// rank throws, so no rank goes on to wait in a collective the others left.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>

namespace flowio::runtime {

// What a failure was, in a form that travels in a message: the ErrorCode,
// errno and MPI code of the exception, and its text.
struct FailureFacts {
  int code = 0;
  int system_errno = 0;
  int mpi_code = 0;
  std::string message;
};
FailureFacts facts_of(const std::exception_ptr& failure);

// Throws, on a rank that did not fail itself (and on every rank of a
// collective operation, runtime/outcome_agreement.h), the exception of the same
// kind (IoError, UsageError or MpiError by the code) as `facts` describe,
// naming `operation` and the rank where it failed first.
[[noreturn]] void throw_agreed_failure(const FailureFacts& facts, int failed_rank,
                                       const char* operation);

// Collective over `comm`. `local_failure` is this rank's exception, or
// null. If no rank failed, returns. Otherwise the failing ranks rethrow
// their own exception and the others throw one of the same kind (IoError,
// UsageError or MpiError by the code) with the same code and errno, naming
// the lowest failing rank and its message.
void agree_on_outcome(MPI_Comm comm, std::exception_ptr local_failure, const char* operation);

// Collective over `comm`: runs `step` on this rank, then agrees on the
// outcome as agree_on_outcome does. A step that should run on some ranks
// only tests the rank itself and does nothing elsewhere.
template <typename Step>
void run_collectively(MPI_Comm comm, const char* operation, Step&& step) {
  std::exception_ptr failure;
  try {
    step();
  } catch (...) {
    failure = std::current_exception();
  }
  agree_on_outcome(comm, failure, operation);
}

}  // namespace flowio::runtime
