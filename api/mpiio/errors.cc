#include "api/mpiio/errors.h"

#include <dlfcn.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api/mpiio/layer_file.h"
#include "flowio/error.h"

namespace flowio::mpiio {
namespace {

int class_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
      return MPI_ERR_ARG;
    case ErrorCode::invalid_count:
      return MPI_ERR_COUNT;
    case ErrorCode::invalid_datatype:
      return MPI_ERR_TYPE;
    case ErrorCode::invalid_buffer:
      return MPI_ERR_BUFFER;
    case ErrorCode::invalid_hint:
      return MPI_ERR_INFO_VALUE;
    case ErrorCode::not_same:
      return MPI_ERR_NOT_SAME;
    case ErrorCode::invalid_access_mode:
      return MPI_ERR_AMODE;
    case ErrorCode::read_only:
      return MPI_ERR_READ_ONLY;
    case ErrorCode::file_closed:
      return MPI_ERR_FILE;
    case ErrorCode::no_such_file:
      return MPI_ERR_NO_SUCH_FILE;
    case ErrorCode::file_exists:
      return MPI_ERR_FILE_EXISTS;
    case ErrorCode::access_denied:
      return MPI_ERR_ACCESS;
    case ErrorCode::no_space:
      return MPI_ERR_NO_SPACE;
    case ErrorCode::io:
      return MPI_ERR_IO;
    case ErrorCode::unsupported:
      return MPI_ERR_UNSUPPORTED_OPERATION;
    case ErrorCode::mpi:
      return MPI_ERR_OTHER;
    case ErrorCode::unsupported_representation:
      return MPI_ERR_UNSUPPORTED_DATAREP;
    case ErrorCode::duplicate_representation:
      return MPI_ERR_DUP_DATAREP;
    case ErrorCode::conversion:
      return MPI_ERR_CONVERSION;
  }
  return MPI_ERR_OTHER;
}

// MPI's classes finer than flowio's codes, for failures of the file
// system: a bad name (MPI_ERR_BAD_FILE), a read-only file system
// (MPI_ERR_READ_ONLY), a quota (MPI_ERR_QUOTA). The errnos are those ROMIO
// maps to the same classes. MPI_SUCCESS: the ErrorCode's class stands.
int class_of_errno(int system_errno) {
  switch (system_errno) {
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
      return MPI_ERR_BAD_FILE;
    case EROFS:
      return MPI_ERR_READ_ONLY;
    case EDQUOT:
      return MPI_ERR_QUOTA;
    default:
      return MPI_SUCCESS;
  }
}

struct Handlers {
  std::mutex mutex;
  std::map<MPI_Errhandler, MPI_File_errhandler_function*> functions;
  MPI_Errhandler for_null_file = MPI_ERRORS_RETURN;
};

// The message of the latest failure on this thread, for a fatal handler.
thread_local std::string latest_message;

Handlers& handlers() {
  static Handlers* instance = new Handlers();  // used until exit
  return *instance;
}

// MPICH's own constructor of error codes that carry a message, the one its
// MPI-IO uses: MPI_Error_string then shows flowio's message, as programs
// that print or inspect it expect. It is MPICH's internal function, looked
// up at run time; without it (another MPI) codes are the bare classes.
using CreateCode = int (*)(int last_code, int fatal, const char* function, int line,
                           int error_class, const char* generic, const char* specific, ...);

CreateCode mpich_create_code() {
  static const auto create =
      reinterpret_cast<CreateCode>(dlsym(RTLD_DEFAULT, "MPIR_Err_create_code"));
  return create;
}

// MPICH cuts each line of an error stack at about 250 characters, which
// a message naming a file deep in a directory tree passes (the name of the
// file is then cut off): a longer message goes on several lines, broken at
// spaces.
constexpr std::size_t kStackLineChars = 200;

std::vector<std::string> stack_lines(const std::string& message) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  while (message.size() - from > kStackLineChars) {
    const std::size_t space = message.rfind(' ', from + kStackLineChars);
    const bool at_space = space != std::string::npos && space > from;
    const std::size_t cut = at_space ? space : from + kStackLineChars;
    lines.push_back(message.substr(from, cut - from));
    from = at_space ? cut + 1 : cut;
  }
  lines.push_back(message.substr(from));
  return lines;
}

}  // namespace

int error_code_with_message(int error_class, const char* message) {
  latest_message = message;
  if (CreateCode create = mpich_create_code()) {
    // "**fail %s" is MPICH's message template that prints its argument as
    // it is; 0 asks for a recoverable error. Each line is made on the code
    // of the lines after it: MPI_Error_string prints the latest first.
    const std::vector<std::string> lines = stack_lines(message);
    int code = MPI_SUCCESS;
    for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
      code = create(code, 0, "flowio", 0, error_class, "**fail", "**fail %s", line->c_str());
    }
    int made_class = MPI_SUCCESS;
    if (code != MPI_SUCCESS && MPI_Error_class(code, &made_class) == MPI_SUCCESS &&
        made_class == error_class) {
      return code;
    }
  }
  return error_class;
}

int error_code_of(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::mpi && error.mpi_code() != MPI_SUCCESS) {
      int error_class = MPI_ERR_OTHER;
      MPI_Error_class(error.mpi_code(), &error_class);
      return error_code_with_message(error_class, error.what());
    }
    const int finer = class_of_errno(error.system_errno());
    return error_code_with_message(finer != MPI_SUCCESS ? finer : class_of(error.code()),
                                   error.what());
  } catch (const std::exception& error) {
    return error_code_with_message(MPI_ERR_INTERN, error.what());
  } catch (...) {
    return error_code_with_message(MPI_ERR_INTERN, "unknown failure");
  }
}

int report(LayerFile* file, MPI_File handle, int code) {
  return report(file != nullptr ? file->errhandler : default_handler(), handle, code);
}

int report(MPI_Errhandler handler, MPI_File handle, int code) {
  if (code == MPI_SUCCESS) return code;
  if (handler == MPI_ERRORS_RETURN) return code;
  MPI_File_errhandler_function* function = nullptr;
  {
    Handlers& state = handlers();
    std::lock_guard lock(state.mutex);
    const auto found = state.functions.find(handler);
    if (found != state.functions.end()) function = found->second;
  }
  if (function != nullptr) {
    function(&handle, &code);
    return code;
  }
  // MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT, or a handler we do not know.
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(code, text.data(), &length);
  std::fprintf(stderr, "flowio-mpiio: fatal error in an MPI_File call: %s (%s)\n", text.data(),
               latest_message.c_str());
  PMPI_Abort(MPI_COMM_WORLD, code);
  return code;
}

void remember_handler(MPI_Errhandler handler, MPI_File_errhandler_function* function) {
  Handlers& state = handlers();
  std::lock_guard lock(state.mutex);
  state.functions[handler] = function;
}

MPI_Errhandler default_handler() {
  Handlers& state = handlers();
  std::lock_guard lock(state.mutex);
  return state.for_null_file;
}

void set_default_handler(MPI_Errhandler handler) {
  Handlers& state = handlers();
  std::lock_guard lock(state.mutex);
  state.for_null_file = handler;
}

}  // namespace flowio::mpiio
