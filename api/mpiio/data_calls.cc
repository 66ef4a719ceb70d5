// Kept whole (over 500 lines): 62 one-line MPI-IO entry points over the five helpers below.
// The data calls of MPI-IO: blocking, nonblocking and split collective
// reads and writes at explicit offsets, at the individual file pointer and
// at the shared one, each with an int and an MPI_Count (`_c`) count.
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

DataCall at_offset(bool writing, bool collective, MPI_Offset offset, const void* buffer,
                   MPI_Count count, MPI_Datatype datatype) {
  return {writing, collective, Position::explicit_offset, offset, buffer, count, datatype};
}

DataCall at_pointer(bool writing, bool collective, Position position, const void* buffer,
                    MPI_Count count, MPI_Datatype datatype) {
  return {writing, collective, position, 0, buffer, count, datatype};
}

// The status is filled on failure too, so a caller never reads the
// garbage it passed in.
int blocking(MPI_File handle, const DataCall& call, MPI_Status* status) {
  std::size_t moved = 0;
  const int code = serve(handle, [&](LayerFile& file) { moved = run_to_completion(file, call); });
  fill_status(status, moved);
  return code;
}

int nonblocking(MPI_File handle, const DataCall& call, MPI_Request* request) {
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

// Blocking.

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                     MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_at(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kRead, kIndependent, offset, buf, count, datatype), status);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                      MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_at(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kWrite, kIndependent, offset, buf, count, datatype), status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kRead, kCollective, offset, buf, count, datatype), status);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kWrite, kCollective, offset, buf, count, datatype), status);
}

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kIndependent, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                   MPI_Status* status) {
  if (forwarding()) return PMPI_File_write(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kIndependent, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                      MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_all(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kCollective, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                       MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_all(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kCollective, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                         MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_shared(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kIndependent, Position::shared_pointer, buf, count, datatype), status);
}

int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_shared(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kIndependent, Position::shared_pointer, buf, count, datatype), status);
}

int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_ordered(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kCollective, Position::shared_pointer, buf, count, datatype), status);
}

int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_ordered(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kCollective, Position::shared_pointer, buf, count, datatype), status);
}

// Nonblocking.

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                      MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_at(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kRead, kIndependent, offset, buf, count, datatype), request);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                       MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_at(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kWrite, kIndependent, offset, buf, count, datatype), request);
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_at_all(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kRead, kCollective, offset, buf, count, datatype), request);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_at_all(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kWrite, kCollective, offset, buf, count, datatype), request);
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kRead, kIndependent, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                    MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kWrite, kIndependent, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                       MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_all(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kRead, kCollective, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_all(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kWrite, kCollective, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_shared(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kRead, kIndependent, Position::shared_pointer, buf, count, datatype), request);
}

int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_shared(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kWrite, kIndependent, Position::shared_pointer, buf, count, datatype),
      request);
}

// Split collectives, first halves.

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                               MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_read_at_all_begin(fh, offset, buf, count, datatype);
  return begin_split(fh, at_offset(kRead, kCollective, offset, buf, count, datatype));
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_write_at_all_begin(fh, offset, buf, count, datatype);
  return begin_split(fh, at_offset(kWrite, kCollective, offset, buf, count, datatype));
}

int MPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_read_all_begin(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kRead, kCollective, Position::individual_pointer, buf, count, datatype));
}

int MPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_write_all_begin(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kWrite, kCollective, Position::individual_pointer, buf, count, datatype));
}

int MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_read_ordered_begin(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kRead, kCollective, Position::shared_pointer, buf, count, datatype));
}

int MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_write_ordered_begin(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kWrite, kCollective, Position::shared_pointer, buf, count, datatype));
}

// Blocking (MPI_Count counts).

int MPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_at_c(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kRead, kIndependent, offset, buf, count, datatype), status);
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_at_c(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kWrite, kIndependent, offset, buf, count, datatype), status);
}

int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_at_all_c(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kRead, kCollective, offset, buf, count, datatype), status);
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_at_all_c(fh, offset, buf, count, datatype, status);
  return blocking(fh, at_offset(kWrite, kCollective, offset, buf, count, datatype), status);
}

int MPI_File_read_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kIndependent, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_write_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kIndependent, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_read_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_all_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kCollective, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_write_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_all_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kCollective, Position::individual_pointer, buf, count, datatype),
      status);
}

int MPI_File_read_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_shared_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kIndependent, Position::shared_pointer, buf, count, datatype), status);
}

int MPI_File_write_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_shared_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kIndependent, Position::shared_pointer, buf, count, datatype), status);
}

int MPI_File_read_ordered_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  if (forwarding()) return PMPI_File_read_ordered_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kRead, kCollective, Position::shared_pointer, buf, count, datatype), status);
}

int MPI_File_write_ordered_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status* status) {
  if (forwarding()) return PMPI_File_write_ordered_c(fh, buf, count, datatype, status);
  return blocking(
      fh, at_pointer(kWrite, kCollective, Position::shared_pointer, buf, count, datatype), status);
}

// Nonblocking (MPI_Count counts).

int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_at_c(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kRead, kIndependent, offset, buf, count, datatype), request);
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_at_c(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kWrite, kIndependent, offset, buf, count, datatype), request);
}

int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_at_all_c(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kRead, kCollective, offset, buf, count, datatype), request);
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_at_all_c(fh, offset, buf, count, datatype, request);
  return nonblocking(fh, at_offset(kWrite, kCollective, offset, buf, count, datatype), request);
}

int MPI_File_iread_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_c(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kRead, kIndependent, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iwrite_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_c(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kWrite, kIndependent, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iread_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_all_c(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kRead, kCollective, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iwrite_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_all_c(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kWrite, kCollective, Position::individual_pointer, buf, count, datatype),
      request);
}

int MPI_File_iread_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request* request) {
  if (forwarding()) return PMPI_File_iread_shared_c(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kRead, kIndependent, Position::shared_pointer, buf, count, datatype), request);
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request* request) {
  if (forwarding()) return PMPI_File_iwrite_shared_c(fh, buf, count, datatype, request);
  return nonblocking(
      fh, at_pointer(kWrite, kIndependent, Position::shared_pointer, buf, count, datatype),
      request);
}

// Split collectives, first halves (MPI_Count counts).

int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                                 MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_read_at_all_begin_c(fh, offset, buf, count, datatype);
  return begin_split(fh, at_offset(kRead, kCollective, offset, buf, count, datatype));
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                                  MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_write_at_all_begin_c(fh, offset, buf, count, datatype);
  return begin_split(fh, at_offset(kWrite, kCollective, offset, buf, count, datatype));
}

int MPI_File_read_all_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_read_all_begin_c(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kRead, kCollective, Position::individual_pointer, buf, count, datatype));
}

int MPI_File_write_all_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                               MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_write_all_begin_c(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kWrite, kCollective, Position::individual_pointer, buf, count, datatype));
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_read_ordered_begin_c(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kRead, kCollective, Position::shared_pointer, buf, count, datatype));
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                                   MPI_Datatype datatype) {
  if (forwarding()) return PMPI_File_write_ordered_begin_c(fh, buf, count, datatype);
  return begin_split(
      fh, at_pointer(kWrite, kCollective, Position::shared_pointer, buf, count, datatype));
}

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
