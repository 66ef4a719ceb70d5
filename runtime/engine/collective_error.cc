#include "runtime/engine/collective_error.h"

#include <climits>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/engine/progress.h"

namespace flowio::runtime {

FailureFacts facts_of(const std::exception_ptr& failure) {
  FailureFacts facts{static_cast<int>(ErrorCode::io), 0, 0, "unknown error"};
  try {
    std::rethrow_exception(failure);
  } catch (const Error& error) {
    facts.code = static_cast<int>(error.code());
    facts.system_errno = error.system_errno();
    facts.mpi_code = error.mpi_code();
    facts.message = error.what();
  } catch (const std::exception& error) {
    facts.message = error.what();
  } catch (...) {
  }
  return facts;
}

void throw_agreed_failure(const FailureFacts& facts, int failed_rank, const char* operation) {
  const auto code = static_cast<ErrorCode>(facts.code);
  const std::string what = std::string(operation) + " failed on rank " +
                           std::to_string(failed_rank) + ": " + facts.message;
  switch (code) {
    case ErrorCode::mpi:
      throw MpiError(what, facts.mpi_code);
    case ErrorCode::io:
    case ErrorCode::no_space:
    case ErrorCode::no_such_file:
    case ErrorCode::file_exists:
    case ErrorCode::access_denied:
      throw IoError(code, what, facts.system_errno);
    default:
      throw UsageError(code, what);
  }
}

void agree_on_outcome(MPI_Comm comm, std::exception_ptr local_failure, const char* operation) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const int mine = local_failure ? rank : INT_MAX;
  int first_failed = INT_MAX;
  // Nonblocking, then waited for with back-off: every process reaches this
  // point at its own pace, and the early ones must not spin on a core the
  // late ones need.
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm, &request),
            "MPI_Iallreduce");
  check_mpi(wait_all_on_caller({&request, 1}, MPI_STATUSES_IGNORE), "MPI_Iallreduce");
  if (first_failed == INT_MAX) return;

  // The lowest failing rank tells the others what went wrong.
  FailureFacts facts;
  if (rank == first_failed) facts = facts_of(local_failure);
  int numbers[4] = {facts.code, facts.system_errno, facts.mpi_code,
                    static_cast<int>(facts.message.size())};
  check_mpi(MPI_Bcast(numbers, 4, MPI_INT, first_failed, comm), "MPI_Bcast");
  facts.message.resize(static_cast<std::size_t>(numbers[3]));
  check_mpi(MPI_Bcast(facts.message.data(), numbers[3], MPI_CHAR, first_failed, comm), "MPI_Bcast");
  if (local_failure) std::rethrow_exception(local_failure);
  facts.code = numbers[0];
  facts.system_errno = numbers[1];
  facts.mpi_code = numbers[2];
  // The same kind of exception the failing rank threw, so that callers can
  // catch IoError (or UsageError, MpiError) on every rank alike.
  throw_agreed_failure(facts, first_failed, operation);
}

}  // namespace flowio::runtime
