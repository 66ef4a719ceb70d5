#include "flowio/transfer.h"

#include <cstdint>

#include "flowio/error.h"

namespace flowio {

MPI_Status Transfer::status() const noexcept {
  MPI_Status status{};
#if defined(MPICH_VERSION)
  // MPICH's encoding (its mpir_status.h): the count in bytes, low 32 bits
  // in count_lo, the rest shifted above the cancelled bit. The same as
  // MPI_Status_set_elements_x(&status, MPI_BYTE, bytes) and
  // MPI_Status_set_cancelled(&status, 0), without taking MPI's lock twice:
  // the MPI-IO layer fills a status this way on every call (its tests
  // check that the two agree).
  const auto count = static_cast<std::uint64_t>(bytes_);
  status.count_lo = static_cast<int>(count & 0xFFFFFFFFu);
  status.count_hi_and_cancelled = static_cast<int>((count >> 32) << 1);
#else
  MPI_Status_set_elements_x(&status, MPI_BYTE, static_cast<MPI_Count>(bytes_));
  MPI_Status_set_cancelled(&status, 0);
#endif
  status.MPI_SOURCE = MPI_UNDEFINED;
  status.MPI_TAG = MPI_UNDEFINED;
  status.MPI_ERROR = MPI_SUCCESS;
  return status;
}

MPI_Count Transfer::count() const {
  const MPI_Status moved = status();
  MPI_Count copies = 0;
  check_mpi(MPI_Get_count_c(&moved, datatype_, &copies), "MPI_Get_count_c");
  return copies;
}

MPI_Count Transfer::elements() const {
  const MPI_Status moved = status();
  MPI_Count elements = 0;
  check_mpi(MPI_Get_elements_x(&moved, datatype_, &elements), "MPI_Get_elements_x");
  return elements;
}

}  // namespace flowio
