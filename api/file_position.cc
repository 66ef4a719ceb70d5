// The individual file pointer and positions in the view: File::seek,
// position, position_of_end, byte_offset.
#include "api/file_impl.h"

namespace flowio {

void File::seek(MPI_Offset offset, Whence whence) {
  Impl& file = impl();
  MPI_Offset base = 0;
  if (whence == Whence::current) base = file.pointer;
  if (whence == Whence::end) base = position_of_end();
  if (base + offset < 0) {
    throw UsageError(ErrorCode::invalid_argument, "seek: the position would be negative");
  }
  file.pointer = base + offset;
}

MPI_Offset File::position() const { return impl().pointer; }

MPI_Offset File::position_of_end() const {
  const Impl& file = impl();
  return file.view->stream_bytes_before(file.fd.size()) / file.view->etype_size();
}

MPI_Offset File::byte_offset(MPI_Offset offset) const {
  const Impl& file = impl();
  if (offset < 0) throw UsageError(ErrorCode::invalid_argument, "byte_offset: negative offset");
  return file.view->file_offset_of(offset * file.view->etype_size());
}

}  // namespace flowio
