#include "api/mpiio/data_access.h"

#include <string>

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

// The shared pointer counts etypes, so a call must move whole etypes for
// it to advance; checked before the pointer moves.
MPI_Offset etypes_of(const LayerFile& file, const DataCall& call) {
  const auto bytes = static_cast<MPI_Offset>(asked_bytes(call));
  const MPI_Count etype = file.etype_size();
  if (bytes % etype != 0) {
    throw UsageError(ErrorCode::invalid_datatype, std::to_string(bytes) +
                                                      " bytes is not a whole number of etypes of " +
                                                      std::to_string(etype) + " bytes");
  }
  return bytes / etype;
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

// Where a shared-pointer call starts, in etypes: claimed atomically by an
// independent call, in rank order by an ordered (collective) one.
MPI_Offset claim_shared(LayerFile& file, const DataCall& call) {
  const MPI_Offset etypes = etypes_of(file, call);
  return call.collective ? file.shared->claim_in_rank_order(etypes)
                         : file.shared->fetch_add(etypes);
}

// The flowio call for `call`, with the shared pointer already resolved to
// `offset`.
Future<std::size_t> start_on_file(File& file, const DataCall& call, Position position,
                                  MPI_Offset offset) {
  void* read_buffer = const_cast<void*>(call.buffer);
  const bool collective = call.collective;
  if (position == Position::individual_pointer) {
    if (call.writing) {
      return collective ? file.iwrite_all(call.buffer, call.count, call.datatype)
                        : file.iwrite(call.buffer, call.count, call.datatype);
    }
    return collective ? file.iread_all(read_buffer, call.count, call.datatype)
                      : file.iread(read_buffer, call.count, call.datatype);
  }
  if (call.writing) {
    return collective ? file.iwrite_at_all(offset, call.buffer, call.count, call.datatype)
                      : file.iwrite_at(offset, call.buffer, call.count, call.datatype);
  }
  return collective ? file.iread_at_all(offset, read_buffer, call.count, call.datatype)
                    : file.iread_at(offset, read_buffer, call.count, call.datatype);
}

struct Resolved {
  Position position;
  MPI_Offset offset;
};

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

Resolved resolve(LayerFile& file, const DataCall& call) {
  try {
    check_call(file, call);
  } catch (const Error& error) {
    // The other processes may be in the collective call already: this one
    // takes part without data, so that it fails on all of them. (Ordered
    // calls fail before their collective claim of the shared pointer.)
    if (call.collective && call.position != Position::shared_pointer) {
      file.file.refuse_collective(call.writing, error.code());
    }
    throw;
  }
  if (call.position == Position::shared_pointer) {
    return {Position::explicit_offset, claim_shared(file, call)};
  }
  return {call.position, call.offset};
}

}  // namespace

std::size_t run_to_completion(LayerFile& file, const DataCall& call) {
  const Resolved where = resolve(file, call);
  File& flowio_file = file.file;
  void* read_buffer = const_cast<void*>(call.buffer);
  // The blocking collective forms let flowio work on this thread.
  if (call.collective && where.position == Position::individual_pointer) {
    return call.writing ? flowio_file.write_all(call.buffer, call.count, call.datatype)
                        : flowio_file.read_all(read_buffer, call.count, call.datatype);
  }
  if (call.collective) {
    return call.writing
               ? flowio_file.write_at_all(where.offset, call.buffer, call.count, call.datatype)
               : flowio_file.read_at_all(where.offset, read_buffer, call.count, call.datatype);
  }
  const bool reading_at_pointer = !call.writing && where.position == Position::individual_pointer;
  const MPI_Offset before = reading_at_pointer ? flowio_file.position() : 0;
  // The blocking independent forms run on this thread, without a future.
  std::size_t moved = 0;
  if (where.position == Position::individual_pointer) {
    moved = call.writing ? flowio_file.write(call.buffer, call.count, call.datatype)
                         : flowio_file.read(read_buffer, call.count, call.datatype);
  } else {
    moved = call.writing
                ? flowio_file.write_at(where.offset, call.buffer, call.count, call.datatype)
                : flowio_file.read_at(where.offset, read_buffer, call.count, call.datatype);
  }
  // A blocking read that ends early at end of file leaves the pointer after
  // what it read, as ROMIO does (flowio moves it by the amount asked, at
  // the call, which nonblocking reads need).
  if (reading_at_pointer && moved < asked_bytes(call)) {
    flowio_file.seek(before + static_cast<MPI_Offset>(moved) / file.etype_size(), Whence::set);
  }
  return moved;
}

Future<std::size_t> start(LayerFile& file, const DataCall& call) {
  const Resolved where = resolve(file, call);
  return start_on_file(file.file, call, where.position, where.offset);
}

}  // namespace flowio::mpiio
