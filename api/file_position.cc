// The individual file pointer and positions in the view: File::seek,
// position, position_of_end, byte_offset.
#include "api/file_impl.h"

namespace flowio {

void File::seek(MPI_Offset offset, Whence whence) {
  Impl& file = impl();
  MPI_Offset base = 0;
  if (whence == Whence::current) base = file.pointer;
  if (whence == Whence::end) base = position_of_end();
  MPI_Offset position = 0;
  if (__builtin_add_overflow(base, offset, &position) || position < 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "seek: the position would be negative or past 2^63");
  }
  file.pointer = position;
}

MPI_Offset File::position() const { return impl().pointer; }

MPI_Offset File::position_of_end() const {
  const Impl& file = impl();
  return file.view->stream_bytes_before(file.fd.size()) / file.view->etype_size();
}

MPI_Offset File::byte_offset(MPI_Offset offset) const {
  const Impl& file = impl();
  if (offset < 0) throw UsageError(ErrorCode::invalid_argument, "byte_offset: negative offset");
  std::int64_t position = 0;
  if (__builtin_mul_overflow(offset, file.view->etype_size(), &position) ||
      position >= file.view->stream_reach()) {
    throw UsageError(ErrorCode::invalid_argument, "byte_offset: offset " + std::to_string(offset) +
                                                      " lies past file offset 2^62");
  }
  return file.view->file_offset_of(position);
}

}  // namespace flowio
