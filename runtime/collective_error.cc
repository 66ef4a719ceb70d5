#include "runtime/collective_error.h"

#include <climits>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/progress.h"

namespace flowio::runtime {

void agree_on_outcome(MPI_Comm comm, std::exception_ptr local_failure, const char* operation) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const int mine = local_failure ? rank : INT_MAX;
  int first_failed = INT_MAX;
  // Nonblocking, then waited for with yields: every process reaches this
  // point at its own pace, and the early ones must not spin on a core the
  // late ones need.
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm, &request),
            "MPI_Iallreduce");
  check_mpi(wait_all_yielding({&request, 1}, MPI_STATUSES_IGNORE), "MPI_Iallreduce");
  if (first_failed == INT_MAX) return;

  // The lowest failing rank tells the others what went wrong.
  int facts[3] = {static_cast<int>(ErrorCode::io), 0, 0};
  std::string message = "unknown error";
  if (rank == first_failed) {
    try {
      std::rethrow_exception(local_failure);
    } catch (const Error& error) {
      facts[0] = static_cast<int>(error.code());
      facts[1] = error.system_errno();
      facts[2] = error.mpi_code();
      message = error.what();
    } catch (const std::exception& error) {
      message = error.what();
    }
  }
  int length = static_cast<int>(message.size());
  check_mpi(MPI_Bcast(facts, 3, MPI_INT, first_failed, comm), "MPI_Bcast");
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, first_failed, comm), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(length));
  check_mpi(MPI_Bcast(message.data(), length, MPI_CHAR, first_failed, comm), "MPI_Bcast");
  if (local_failure) std::rethrow_exception(local_failure);
  // The same kind of exception the failing rank threw, so that callers can
  // catch IoError (or UsageError, MpiError) on every rank alike.
  const auto code = static_cast<ErrorCode>(facts[0]);
  const std::string what =
      std::string(operation) + " failed on rank " + std::to_string(first_failed) + ": " + message;
  switch (code) {
    case ErrorCode::mpi:
      throw MpiError(what, facts[2]);
    case ErrorCode::io:
    case ErrorCode::no_space:
    case ErrorCode::no_such_file:
    case ErrorCode::file_exists:
    case ErrorCode::access_denied:
      throw IoError(code, what, facts[1]);
    default:
      throw UsageError(code, what);
  }
}

}  // namespace flowio::runtime
