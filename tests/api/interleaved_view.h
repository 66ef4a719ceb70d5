// A view that interleaves the ranks' bytes in blocks, so that collective
// calls gather (two-phase I/O) and every rank is a client of every
// aggregator.
#pragma once

#include <mpi.h>

#include "flowio/file.h"
#include "tests/support/world.h"

namespace flowio::testing {

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

  void apply(flowio::File& file) const {
    file.set_view(static_cast<MPI_Offset>(world_rank()) * block_, MPI_BYTE, type_);
  }

 private:
  int block_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace flowio::testing
