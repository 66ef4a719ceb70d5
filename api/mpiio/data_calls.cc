// The data calls of MPI-IO: blocking, nonblocking and split collective
// reads and writes at explicit offsets, at the individual file pointer and
// at the shared one. MPI-4 gives every call with an int count a `_c` twin
// taking an MPI_Count, otherwise alike: each pair is defined once here
// (FLOWIO_BOTH_COUNTS) and both forms reach the same helpers.
#include <mpi.h>

#include <utility>

#include "api/mpiio/activation.h"
#include "api/mpiio/data_access.h"
#include "api/mpiio/layer_file.h"
#include "api/mpiio/requests.h"
#include "api/mpiio/serve.h"
#include "flowio/error.h"

namespace flowio::mpiio {
namespace {

constexpr bool kWrite = true;
constexpr bool kRead = false;
constexpr bool kCollective = true;
constexpr bool kIndependent = false;
constexpr Position kIndividual = Position::individual_pointer;
constexpr Position kShared = Position::shared_pointer;

DataCall at_offset(bool writing, bool collective, MPI_Offset offset, const void* buffer,
                   MPI_Count count, MPI_Datatype datatype) {
  return {writing, collective, Position::explicit_offset, offset, buffer, count, datatype};
}

DataCall at_pointer(bool writing, bool collective, Position position, const void* buffer,
                    MPI_Count count, MPI_Datatype datatype) {
  return {writing, collective, position, 0, buffer, count, datatype};
}

// Runs the call to completion and fills the status (on failure too, so a
// caller never reads the garbage it passed in).
int serve_call(MPI_File handle, const DataCall& call, MPI_Status* status) {
  std::size_t moved = 0;
  const int code = serve(handle, [&](LayerFile& file) { moved = run_to_completion(file, call); });
  fill_status(status, moved);
  return code;
}

// Starts the call and returns it as an MPI request.
int serve_call(MPI_File handle, const DataCall& call, MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return serve(handle, [&](LayerFile& file) {
    const int started = start_request(start(file, call), file, handle, request);
    if (started != MPI_SUCCESS) throw MpiError("MPI_Grequest_start", started);
  });
}

// MPI allows one split collective per file at a time. A second begin, and
// an end without a begin, are MPI_ERR_IO, ROMIO's class for them.
int begin_split(MPI_File handle, const DataCall& call) {
  return serve(handle, [&](LayerFile& file) {
    if (file.split) {
      throw UsageError(ErrorCode::io, "a split collective is already in progress on this file");
    }
    file.split = SplitCollective{start(file, call), call.buffer};
  });
}

int end_split(MPI_File handle, const void* buffer, MPI_Status* status) {
  fill_status(status, 0);
  return serve(handle, [&](LayerFile& file) {
    if (!file.split) {
      throw UsageError(ErrorCode::io, "no split collective is in progress");
    }
    if (file.split->buffer != buffer) {
      throw UsageError(ErrorCode::invalid_argument,
                       "the *_end call names another buffer than its *_begin call");
    }
    SplitCollective split = std::move(*file.split);
    file.split.reset();
    fill_status(status, split.done.get());
  });
}

}  // namespace
}  // namespace flowio::mpiio

using namespace flowio::mpiio;

// FLOWIO_BOTH_COUNTS(SHAPE, NAME, ...) defines MPI_File_NAME, whose count
// is an int, and MPI_File_NAME_c, whose count is an MPI_Count, from the
// one SHAPE macro. Each entry point forwards to the PMPI function of its
// own name while the layer forwards (activation.h).
#define FLOWIO_BOTH_COUNTS(SHAPE, NAME, ...) \
  SHAPE(NAME, int, __VA_ARGS__)              \
  SHAPE(NAME##_c, MPI_Count, __VA_ARGS__)

// MPI_File_NAME(fh, offset, buf, count, datatype, out): a call at an
// explicit offset, blocking (`out` an MPI_Status*) or nonblocking (an
// MPI_Request*).
#define FLOWIO_AT_OFFSET(NAME, COUNT, BUFFER, OUT, DIRECTION, COLLECTIVE)                       \
  int MPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFFER buf, COUNT count,                  \
                      MPI_Datatype datatype, OUT out) {                                         \
    if (forwarding()) return PMPI_File_##NAME(fh, offset, buf, count, datatype, out);           \
    return serve_call(fh, at_offset(DIRECTION, COLLECTIVE, offset, buf, count, datatype), out); \
  }

// MPI_File_NAME(fh, buf, count, datatype, out): a call at a file pointer
// (POSITION), blocking or nonblocking as above.
#define FLOWIO_AT_POINTER(NAME, COUNT, BUFFER, OUT, DIRECTION, COLLECTIVE, POSITION)               \
  int MPI_File_##NAME(MPI_File fh, BUFFER buf, COUNT count, MPI_Datatype datatype, OUT out) {      \
    if (forwarding()) return PMPI_File_##NAME(fh, buf, count, datatype, out);                      \
    return serve_call(fh, at_pointer(DIRECTION, COLLECTIVE, POSITION, buf, count, datatype), out); \
  }

// MPI_File_NAME(fh, offset, buf, count, datatype): the first half of a
// split collective at an explicit offset.
#define FLOWIO_BEGIN_AT_OFFSET(NAME, COUNT, BUFFER, DIRECTION)                               \
  int MPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFFER buf, COUNT count,               \
                      MPI_Datatype datatype) {                                               \
    if (forwarding()) return PMPI_File_##NAME(fh, offset, buf, count, datatype);             \
    return begin_split(fh, at_offset(DIRECTION, kCollective, offset, buf, count, datatype)); \
  }

// MPI_File_NAME(fh, buf, count, datatype): the first half of a split
// collective at a file pointer.
#define FLOWIO_BEGIN_AT_POINTER(NAME, COUNT, BUFFER, DIRECTION, POSITION)                       \
  int MPI_File_##NAME(MPI_File fh, BUFFER buf, COUNT count, MPI_Datatype datatype) {            \
    if (forwarding()) return PMPI_File_##NAME(fh, buf, count, datatype);                        \
    return begin_split(fh, at_pointer(DIRECTION, kCollective, POSITION, buf, count, datatype)); \
  }

// clang-format off

// Blocking.
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, read_at, void*, MPI_Status*, kRead, kIndependent)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, write_at, const void*, MPI_Status*, kWrite, kIndependent)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, read_at_all, void*, MPI_Status*, kRead, kCollective)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, write_at_all, const void*, MPI_Status*, kWrite, kCollective)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, read, void*, MPI_Status*, kRead, kIndependent, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, write, const void*, MPI_Status*, kWrite, kIndependent, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, read_all, void*, MPI_Status*, kRead, kCollective, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, write_all, const void*, MPI_Status*, kWrite, kCollective, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, read_shared, void*, MPI_Status*, kRead, kIndependent, kShared)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, write_shared, const void*, MPI_Status*, kWrite, kIndependent, kShared)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, read_ordered, void*, MPI_Status*, kRead, kCollective, kShared)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, write_ordered, const void*, MPI_Status*, kWrite, kCollective, kShared)

// Nonblocking.
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, iread_at, void*, MPI_Request*, kRead, kIndependent)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, iwrite_at, const void*, MPI_Request*, kWrite, kIndependent)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, iread_at_all, void*, MPI_Request*, kRead, kCollective)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_OFFSET, iwrite_at_all, const void*, MPI_Request*, kWrite, kCollective)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, iread, void*, MPI_Request*, kRead, kIndependent, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, iwrite, const void*, MPI_Request*, kWrite, kIndependent, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, iread_all, void*, MPI_Request*, kRead, kCollective, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, iwrite_all, const void*, MPI_Request*, kWrite, kCollective, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, iread_shared, void*, MPI_Request*, kRead, kIndependent, kShared)
FLOWIO_BOTH_COUNTS(FLOWIO_AT_POINTER, iwrite_shared, const void*, MPI_Request*, kWrite, kIndependent, kShared)

// Split collectives, first halves.
FLOWIO_BOTH_COUNTS(FLOWIO_BEGIN_AT_OFFSET, read_at_all_begin, void*, kRead)
FLOWIO_BOTH_COUNTS(FLOWIO_BEGIN_AT_OFFSET, write_at_all_begin, const void*, kWrite)
FLOWIO_BOTH_COUNTS(FLOWIO_BEGIN_AT_POINTER, read_all_begin, void*, kRead, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_BEGIN_AT_POINTER, write_all_begin, const void*, kWrite, kIndividual)
FLOWIO_BOTH_COUNTS(FLOWIO_BEGIN_AT_POINTER, read_ordered_begin, void*, kRead, kShared)
FLOWIO_BOTH_COUNTS(FLOWIO_BEGIN_AT_POINTER, write_ordered_begin, const void*, kWrite, kShared)

// clang-format on

// Split collectives, second halves.

int MPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_at_all_end(fh, buf, status);
  return end_split(fh, buf, status);
}

int MPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_at_all_end(fh, buf, status);
  return end_split(fh, buf, status);
}

int MPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_all_end(fh, buf, status);
  return end_split(fh, buf, status);
}

int MPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_all_end(fh, buf, status);
  return end_split(fh, buf, status);
}

int MPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_ordered_end(fh, buf, status);
  return end_split(fh, buf, status);
}

int MPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_ordered_end(fh, buf, status);
  return end_split(fh, buf, status);
}
