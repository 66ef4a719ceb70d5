// Where the bytes of a view's data stream lie in its file, worked out
// without MPI-IO: the oracle for reads of a differential case at scale,
// where MPICH 4.0.2's own reads return bytes that are not in the file (a
// filetype of extent past 2^34 read at file offsets past 2^33).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace flowio::testing {

// One copy of a filetype as runs of bytes in stream order: `repeat` runs of
// `length` bytes, `stride` bytes apart, the first at `offset` from the
// copy's start. A vector is one such piece; an irregular type many.
struct LayoutPiece {
  std::int64_t offset = 0;
  std::int64_t length = 0;
  std::int64_t repeat = 1;
  std::int64_t stride = 0;
};

struct ViewLayout {
  std::vector<LayoutPiece> pieces;
  std::vector<std::int64_t> piece_starts;  // stream byte (within a copy) where each piece begins
  std::int64_t copy_bytes = 0;             // data bytes of one copy (the filetype's size)
  std::int64_t period = 0;                 // file bytes from one copy to the next (its extent)

  // The file offset of byte `stream_byte` of the data stream of a view
  // whose displacement is `displacement`.
  std::int64_t file_offset(std::int64_t displacement, std::int64_t stream_byte) const;
};

// The layout of `filetype` copied `period` bytes apart, found by packing it
// from buffers that hold each byte's own offset. For types whose true
// extent is at most 16 MiB.
ViewLayout layout_by_packing(MPI_Datatype filetype, std::int64_t period);

// The layout of `blocks` runs of `block_bytes`, `stride_bytes` apart,
// copied `period` bytes apart.
ViewLayout vector_layout(std::int64_t blocks, std::int64_t block_bytes, std::int64_t stride_bytes,
                         std::int64_t period);

// `bytes` bytes of the view's data stream from `stream_byte` on, read from
// the open file `fd` with pread (holes and bytes past its end read as
// zeros).
std::vector<unsigned char> read_through_layout(int fd, const ViewLayout& layout,
                                               std::int64_t displacement, std::int64_t stream_byte,
                                               std::int64_t bytes);

}  // namespace flowio::testing
