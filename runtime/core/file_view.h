// FileView: what part of a file a process sees, as MPI_File_set_view
// defines it. The view is the filetype tiled without end from the
// displacement; its data bytes, in order, form the view's byte stream.
// Offsets in read_at/write_at count etypes of that stream.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "runtime/core/flat_type.h"
#include "runtime/core/piece_cursor.h"

namespace flowio::core {

// File offsets stay below 2^62: sieving locks the file from there
// (io/sieve_lock.h), where no data lies, and offset arithmetic stays
// clear of 2^63.
inline constexpr std::int64_t kFileOffsetLimit = std::int64_t{1} << 62;

// What a view depends on besides its three arguments.
struct ViewRules {
  // The file's data representation, when it is not native: the bytes each
  // predefined type takes in the file (MPI 4.1, 14.5). The etype and the
  // filetype are then laid out in those bytes; sizes, offsets and the
  // view's stream all count file bytes. Null: native.
  const FileExtentOf* file_extent = nullptr;
  // The file is not open for writing, where MPI lets the pieces of etypes
  // and filetypes overlap (MPI 4.1, 14.3); their displacements must still
  // never decrease.
  bool allow_overlap = false;
};

// Immutable once built; may be shared across threads.
class FileView {
 public:
  // The default view: displacement 0, etype and filetype MPI_BYTE.
  FileView();

  // Builds and validates a view. Throws UsageError when MPI forbids it:
  // a negative displacement, an etype with no data, a filetype whose size
  // is not a multiple of the etype's, or an etype or filetype whose pieces
  // have negative displacements, decrease, or (unless rules.allow_overlap)
  // overlap (also across consecutive filetype tiles).
  FileView(std::int64_t displacement, MPI_Datatype etype, MPI_Datatype filetype,
           const ViewRules& rules = {});

  // A view rebuilt from the parts of one already validated elsewhere (as
  // metadata transfer does); not validated again.
  FileView(std::int64_t displacement, std::int64_t etype_size, FlatType filetype);

  std::int64_t displacement() const { return displacement_; }
  std::int64_t etype_size() const { return etype_size_; }
  const FlatType& filetype() const { return filetype_; }
  // True when the view is the whole file from the displacement on, in order.
  bool is_contiguous() const { return filetype_.is_contiguous(); }
  // True when pieces of the view's stream overlap in the file (allowed on
  // files not open for writing): the stream is then not in file order, and
  // only walking its pieces (file_pieces) is meaningful.
  bool overlaps() const { return overlaps_; }

  // Cursor over the file pieces (absolute file offsets) of the view's byte
  // stream, starting at stream byte `stream_position`. The stream is
  // unbounded; a view whose filetype holds no data has an empty stream.
  PieceCursor file_pieces(std::int64_t stream_position) const;

  // File offset of stream byte `stream_position`.
  std::int64_t file_offset_of(std::int64_t stream_position) const;

  // Bytes of the view's stream that lie in the file below `file_offset`:
  // the inverse of file_offset_of.
  std::int64_t stream_bytes_before(std::int64_t file_offset) const;

  // The bytes at the start of the view's stream whose whole copies of the
  // filetype lie below kFileOffsetLimit: a call reaching past them is
  // refused (their file offsets would meet the sieve lock's, or pass
  // 2^63 on the way).
  std::int64_t stream_reach() const;

 private:
  std::int64_t displacement_ = 0;
  std::int64_t etype_size_ = 1;
  FlatType filetype_;
  bool overlaps_ = false;
};

}  // namespace flowio::core
