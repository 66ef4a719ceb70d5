#include "flowio/error.h"

#include <mpi.h>

#include <cerrno>
#include <cstring>

namespace flowio {
namespace {

std::string describe(ErrorCode code, const std::string& message, int system_errno, int mpi_code,
                     const std::source_location& where) {
  std::string text = message + " [" + to_string(code);
  if (system_errno != 0) {
    text += "; errno " + std::to_string(system_errno) + " (" + std::strerror(system_errno) + ")";
  }
  if (mpi_code != 0) {
    char mpi_text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(mpi_code, mpi_text, &length) != MPI_SUCCESS) length = 0;
    text += "; MPI error " + std::to_string(mpi_code) + " (" + std::string(mpi_text, length) + ")";
  }
  text += "] at ";
  text += where.file_name();
  text += ":" + std::to_string(where.line());
  return text;
}

}  // namespace

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument:
      return "invalid_argument";
    case ErrorCode::invalid_count:
      return "invalid_count";
    case ErrorCode::invalid_datatype:
      return "invalid_datatype";
    case ErrorCode::invalid_buffer:
      return "invalid_buffer";
    case ErrorCode::invalid_hint:
      return "invalid_hint";
    case ErrorCode::not_same:
      return "not_same";
    case ErrorCode::invalid_access_mode:
      return "invalid_access_mode";
    case ErrorCode::read_only:
      return "read_only";
    case ErrorCode::file_closed:
      return "file_closed";
    case ErrorCode::no_such_file:
      return "no_such_file";
    case ErrorCode::file_exists:
      return "file_exists";
    case ErrorCode::access_denied:
      return "access_denied";
    case ErrorCode::no_space:
      return "no_space";
    case ErrorCode::io:
      return "io";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::mpi:
      return "mpi";
    case ErrorCode::unsupported_representation:
      return "unsupported_representation";
    case ErrorCode::duplicate_representation:
      return "duplicate_representation";
    case ErrorCode::conversion:
      return "conversion";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message, int system_errno, int mpi_code,
             std::source_location where)
    : std::runtime_error(describe(code, message, system_errno, mpi_code, where)),
      code_(code),
      message_(message),
      system_errno_(system_errno),
      mpi_code_(mpi_code),
      where_(where) {}

ErrorCode error_code_for_errno(int system_errno) noexcept {
  switch (system_errno) {
    case ENOSPC:
    case EDQUOT:
      return ErrorCode::no_space;
    case ENOENT:
      return ErrorCode::no_such_file;
    case EEXIST:
      return ErrorCode::file_exists;
    case EACCES:
    case EPERM:
    case EROFS:
      return ErrorCode::access_denied;
    default:
      return ErrorCode::io;
  }
}

void throw_errno(int system_errno, const std::string& what, std::source_location where) {
  throw IoError(error_code_for_errno(system_errno), what, system_errno, where);
}

void check_mpi(int mpi_code, const char* what, std::source_location where) {
  if (mpi_code != MPI_SUCCESS) throw MpiError(what, mpi_code, where);
}

}  // namespace flowio
