// The shared file pointer's calls: File::*_shared and *_ordered, each the
// matching call at an explicit offset once the pointer has given its place,
// and seek_shared, position_shared.
#include <string>

#include "api/file_impl.h"
#include "runtime/engine/collective_error.h"

namespace flowio {

// The checks are prepare_transfer's, made before the pointer moves: a call
// that fails them claims nothing. The transfer itself checks again at its
// offset (the datatype's flattening is cached, so that costs a lookup).
MPI_Offset File::Impl::claim_shared(bool writing, const void* buffer, MPI_Count count,
                                    MPI_Datatype datatype) {
  // The shared pointer's calls come after every write behind (as the
  // hint's semantics say: hints.h).
  write_behind.drain();
  const Transfer checked = prepare_transfer(writing, 0, buffer, count, datatype, false);
  return shared->fetch_add(checked.stream_bytes / view->etype_size());
}

// Agreed first, so that bad arguments on one process fail the call on
// every process rather than leave the others waiting in the claim.
MPI_Offset File::Impl::claim_ordered(bool writing, const void* buffer, MPI_Count count,
                                     MPI_Datatype datatype) {
  write_behind.drain();
  MPI_Offset etypes = 0;
  runtime::run_collectively(comm, writing ? "write_ordered" : "read_ordered", [&] {
    const Transfer checked = prepare_transfer(writing, 0, buffer, count, datatype, false);
    etypes = checked.stream_bytes / view->etype_size();
  });
  return shared->claim_in_rank_order(etypes);
}

Future<std::size_t> File::iwrite_shared(const void* buffer, MPI_Count count,
                                        MPI_Datatype datatype) {
  return iwrite_at(impl().claim_shared(true, buffer, count, datatype), buffer, count, datatype);
}

Future<std::size_t> File::iread_shared(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return iread_at(impl().claim_shared(false, buffer, count, datatype), buffer, count, datatype);
}

std::size_t File::write_shared(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return write_at(impl().claim_shared(true, buffer, count, datatype), buffer, count, datatype);
}

std::size_t File::read_shared(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return read_at(impl().claim_shared(false, buffer, count, datatype), buffer, count, datatype);
}

Future<std::size_t> File::iwrite_ordered(const void* buffer, MPI_Count count,
                                         MPI_Datatype datatype) {
  return iwrite_at_all(impl().claim_ordered(true, buffer, count, datatype), buffer, count,
                       datatype);
}

Future<std::size_t> File::iread_ordered(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return iread_at_all(impl().claim_ordered(false, buffer, count, datatype), buffer, count,
                      datatype);
}

std::size_t File::write_ordered(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return write_at_all(impl().claim_ordered(true, buffer, count, datatype), buffer, count, datatype);
}

std::size_t File::read_ordered(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return read_at_all(impl().claim_ordered(false, buffer, count, datatype), buffer, count, datatype);
}

// Every process computes the position it would set; they must agree (MPI
// requires the same arguments, and with Whence::current every process
// reads the same pointer, as no data call may run meanwhile).
void File::seek_shared(MPI_Offset offset, Whence whence) {
  Impl& file = impl();
  MPI_Offset position = 0;
  runtime::run_collectively(file.comm, "seek_shared", [&] {
    MPI_Offset base = 0;
    if (whence == Whence::current) base = file.shared->get();
    if (whence == Whence::end) base = position_of_end();
    if (__builtin_add_overflow(base, offset, &position) || position < 0) {
      throw UsageError(ErrorCode::invalid_argument,
                       "seek_shared: the position would be negative or past 2^63");
    }
  });
  const MPI_Offset mine[2] = {position, -position};
  MPI_Offset least[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, least, 2, MPI_OFFSET, MPI_MIN, file.comm), "MPI_Allreduce");
  require_same(least[0] == -least[1], "seek_shared: the position");
  file.shared->set(position);
}

MPI_Offset File::position_shared() const { return impl().shared->get(); }

}  // namespace flowio
