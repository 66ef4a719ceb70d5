// MpiDatatype: an MPI datatype committed at construction and freed with
// the handle (move-only), and subarray(), the C-order block of a 3-D
// array of doubles that the simulation uses for its file view and halos.
#pragma once

#include <mpi.h>

#include <utility>

#include "flowio/flowio.h"

namespace insitu {

class MpiDatatype {
 public:
  MpiDatatype() = default;
  // Takes ownership of `uncommitted` and commits it; throws flowio::MpiError.
  explicit MpiDatatype(MPI_Datatype uncommitted) : type_(uncommitted) {
    flowio::check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  MpiDatatype(MpiDatatype&& other) noexcept
      : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  MpiDatatype& operator=(MpiDatatype&& other) noexcept {
    if (this != &other) {
      free();
      type_ = std::exchange(other.type_, MPI_DATATYPE_NULL);
    }
    return *this;
  }
  MpiDatatype(const MpiDatatype&) = delete;
  MpiDatatype& operator=(const MpiDatatype&) = delete;
  ~MpiDatatype() { free(); }
  MPI_Datatype get() const { return type_; }

 private:
  void free() noexcept {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// The block `subsizes` at `starts` of a C-order `sizes` array of doubles.
inline MpiDatatype subarray(const int sizes[3], const int subsizes[3], const int starts[3]) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  flowio::check_mpi(
      MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type),
      "MPI_Type_create_subarray");
  return MpiDatatype(type);
}

}  // namespace insitu
