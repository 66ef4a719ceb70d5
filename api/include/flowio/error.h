// Typed errors. Every failure flowio reports is one of these exceptions; in
// a Future it travels as std::exception_ptr and get() rethrows it.
//
// MPI, errno and liburing codes become exceptions at exactly one place,
// the throw_* helpers below, which keep the original code and the source
// location where the failure happened.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace flowio {

// What went wrong, in terms an MPI-IO user knows (each maps to one MPI
// error class in the MPI-IO compatibility layer).
enum class ErrorCode {
  invalid_argument,     // MPI_ERR_ARG
  invalid_count,        // MPI_ERR_COUNT
  invalid_datatype,     // MPI_ERR_TYPE
  invalid_buffer,       // MPI_ERR_BUFFER (a null buffer for data)
  invalid_hint,         // MPI_ERR_INFO_VALUE (a hint flowio knows, with a value it cannot use)
  not_same,             // MPI_ERR_NOT_SAME (a collective argument that differs between processes)
  invalid_access_mode,  // MPI_ERR_AMODE
  read_only,            // MPI_ERR_READ_ONLY
  file_closed,          // MPI_ERR_FILE
  no_such_file,         // MPI_ERR_NO_SUCH_FILE
  file_exists,          // MPI_ERR_FILE_EXISTS
  access_denied,        // MPI_ERR_ACCESS
  no_space,             // MPI_ERR_NO_SPACE
  io,                   // MPI_ERR_IO
  unsupported,          // MPI_ERR_UNSUPPORTED_OPERATION
  mpi,                  // an MPI call failed; mpi_code() has its code
  unsupported_representation,  // MPI_ERR_UNSUPPORTED_DATAREP: no such data representation
  duplicate_representation,    // MPI_ERR_DUP_DATAREP: the name is registered already
  conversion,                  // MPI_ERR_CONVERSION: data cannot be converted
};

// Human-readable name of a code, e.g. "invalid_datatype".
const char* to_string(ErrorCode code) noexcept;

// Base of every flowio exception. what() reads
// "<message> [<code>; errno N (strerror) | MPI error N] at file:line".
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message, int system_errno, int mpi_code,
        std::source_location where);

  ErrorCode code() const noexcept { return code_; }
  // The message alone, without the code, errno and place what() adds.
  const std::string& message() const noexcept { return message_; }
  // The errno that caused this error, or 0.
  int system_errno() const noexcept { return system_errno_; }
  // The MPI error code that caused this error, or 0 (MPI_SUCCESS).
  int mpi_code() const noexcept { return mpi_code_; }
  const std::source_location& where() const noexcept { return where_; }

 private:
  ErrorCode code_;
  std::string message_;
  int system_errno_;
  int mpi_code_;
  std::source_location where_;
};

// The caller broke a rule of the API: bad argument, datatype, mode or state.
// Thrown at the call, before any I/O starts.
class UsageError : public Error {
 public:
  UsageError(ErrorCode code, const std::string& message,
             std::source_location where = std::source_location::current())
      : Error(code, message, 0, 0, where) {}
};

// Storage failed (EIO, ENOSPC, a missing file, ...). system_errno() says why.
class IoError : public Error {
 public:
  IoError(ErrorCode code, const std::string& message, int system_errno,
          std::source_location where = std::source_location::current())
      : Error(code, message, system_errno, 0, where) {}
};

// An MPI call failed. mpi_code() has its return code.
class MpiError : public Error {
 public:
  MpiError(const std::string& message, int mpi_code,
           std::source_location where = std::source_location::current())
      : Error(ErrorCode::mpi, message, 0, mpi_code, where) {}
};

// The ErrorCode an errno value means (ENOSPC -> no_space, ENOENT ->
// no_such_file, EEXIST -> file_exists, EACCES/EPERM/EROFS -> access_denied,
// anything else -> io).
ErrorCode error_code_for_errno(int system_errno) noexcept;

// Throws IoError for a failed system call; `what` names the call and its
// object ("pwrite /path"). Never returns.
[[noreturn]] void throw_errno(int system_errno, const std::string& what,
                              std::source_location where = std::source_location::current());

// Throws MpiError if `mpi_code` is not MPI_SUCCESS; `what` names the call.
void check_mpi(int mpi_code, const char* what,
               std::source_location where = std::source_location::current());

}  // namespace flowio
