#include "api/mpiio/data_access.h"

#include <string>

#include "api/layer_hooks.h"
#include "api/mpiio/layer_file.h"
#include "api/mpiio/sequential_mode.h"
#include "flowio/error.h"
#include "runtime/core/datatype_checks.h"

namespace flowio::mpiio {
namespace {

// The bytes the call asks for; check_arguments has made sure they fit.
std::size_t asked_bytes(const DataCall& call) {
  MPI_Count type_size = 0;
  MPI_Type_size_x(call.datatype, &type_size);
  return static_cast<std::size_t>(type_size) * static_cast<std::size_t>(call.count);
}

void check_arguments(const LayerFile& file, const DataCall& call) {
  core::require_committed(call.datatype, "the datatype");
  if (call.count < 0) throw UsageError(ErrorCode::invalid_count, "negative count");
  if (call.position == Position::explicit_offset && call.offset < 0) {
    throw UsageError(ErrorCode::invalid_argument, "negative offset");
  }
  MPI_Count type_size = 0;
  MPI_Type_size_x(call.datatype, &type_size);
  MPI_Count bytes = 0;
  if (__builtin_mul_overflow(type_size, call.count, &bytes)) {
    throw UsageError(ErrorCode::invalid_count, "count times the datatype's size overflows");
  }
  // ROMIO's class for a part of an etype is MPI_ERR_IO (flowio's own is
  // invalid_datatype): programs that test it see the same here.
  if (bytes % file.etype_size() != 0) {
    throw IoError(ErrorCode::io,
                  std::to_string(bytes) + " bytes is not a whole number of etypes of " +
                      std::to_string(file.etype_size()) + " bytes",
                  0);
  }
}

void check_call(const LayerFile& file, const DataCall& call) {
  check_arguments(file, call);
  // In ROMIO's order: a write to a read-only file is that first.
  if (call.writing && (file.amode & MPI_MODE_RDONLY) != 0) {
    throw UsageError(ErrorCode::read_only, "write: the file is read-only");
  }
  if (call.position != Position::shared_pointer) {
    require_random_access(file, call.position == Position::explicit_offset
                                    ? "a data access at an explicit offset"
                                    : "a data access at the individual file pointer");
  }
}

void check_or_refuse(LayerFile& file, const DataCall& call) {
  try {
    check_call(file, call);
  } catch (const Error& error) {
    // The other processes may be in the collective call already: this one
    // takes part without data, so that it fails on all of them. (Ordered
    // calls fail before their collective claim of the shared pointer.)
    if (call.collective && call.position != Position::shared_pointer) {
      LayerHooks::refuse_collective(file.file, call.writing, error.code());
    }
    throw;
  }
}

}  // namespace

std::size_t run_to_completion(LayerFile& file, const DataCall& call) {
  check_or_refuse(file, call);
  File& flowio_file = file.file;
  const bool reading_at_pointer =
      !call.writing && !call.collective && call.position == Position::individual_pointer;
  const MPI_Offset before = reading_at_pointer ? flowio_file.position() : 0;
  const std::size_t moved = LayerHooks::run(flowio_file, call);
  // A blocking read that ends early at end of file leaves the pointer after
  // what it read, as ROMIO does (flowio moves it by the amount asked, at
  // the call, which nonblocking reads need).
  if (reading_at_pointer && moved < asked_bytes(call)) {
    flowio_file.seek(before + static_cast<MPI_Offset>(moved) / file.etype_size(), Whence::set);
  }
  return moved;
}

Future<std::size_t> start(LayerFile& file, const DataCall& call) {
  check_or_refuse(file, call);
  return LayerHooks::start(file.file, call);
}

}  // namespace flowio::mpiio
