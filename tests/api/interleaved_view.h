// A view that interleaves the ranks' bytes in blocks, so that collective
// calls gather (two-phase I/O) and every rank is a client of every
// aggregator.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "flowio/file.h"
#include "tests/support/world.h"

namespace flowio::testing {

// The file offset of byte `stream_byte` of `rank`'s stream when the ranks'
// blocks of `block` bytes interleave (InterleavedView(block) as `rank`
// applies it).
inline std::int64_t interleaved_offset(std::int64_t block, int rank, std::int64_t stream_byte) {
  return (stream_byte / block * world_size() + rank) * block + stream_byte % block;
}

// This rank's blocks: `block` bytes every world_size() blocks, from block
// number world_rank().
class InterleavedView {
 public:
  explicit InterleavedView(int block) : block_(block) {
    MPI_Datatype one;
    MPI_Type_contiguous(block_, MPI_BYTE, &one);
    MPI_Type_create_resized(one, 0, static_cast<MPI_Aint>(block_) * world_size(), &type_);
    MPI_Type_commit(&type_);
    MPI_Type_free(&one);
  }
  ~InterleavedView() { MPI_Type_free(&type_); }
  InterleavedView(const InterleavedView&) = delete;
  InterleavedView& operator=(const InterleavedView&) = delete;

  // Sets the view on `file`, with `etype` (whose size must divide the
  // block).
  void apply(flowio::File& file, MPI_Datatype etype = MPI_BYTE) const {
    file.set_view(static_cast<MPI_Offset>(world_rank()) * block_, etype, type_);
  }

  // The file offset of this rank's byte `stream_byte` under the view.
  std::int64_t file_offset(std::int64_t stream_byte) const {
    return interleaved_offset(block_, world_rank(), stream_byte);
  }

 private:
  int block_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace flowio::testing
