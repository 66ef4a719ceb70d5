// Transfer: what one data access moved, in the terms of an MPI_Status.
//
//   flowio::Transfer got = file.read_at(0, std::span<double>(values));
//   got.bytes();       // 800
//   got.elements();    // 100: what MPI_Get_elements would say
//   got.count();       // 100: what MPI_Get_count would say
//
// The typed forms of File's calls (file.h) return one; for the forms that
// take a datatype and return bytes, Transfer(bytes, datatype) makes one.
//
// Thread safety: a Transfer is a value; its queries call MPI, which flowio
// runs at MPI_THREAD_MULTIPLE, so any thread may make them.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace flowio {

class Transfer {
 public:
  Transfer() = default;
  // `bytes` moved, in memory, of a buffer of copies of `datatype`.
  Transfer(std::size_t bytes, MPI_Datatype datatype) noexcept
      : bytes_(bytes), datatype_(datatype) {}

  std::size_t bytes() const noexcept { return bytes_; }
  MPI_Datatype datatype() const noexcept { return datatype_; }

  // The queries below ask MPI about datatype(), which must not have been
  // freed (as MPI_Get_count's datatype argument); the predefined types of
  // the typed forms always qualify.

  // Whole copies of datatype() moved: what MPI_Get_count says.
  // MPI_UNDEFINED when the last copy was moved in part (a read that met
  // the end of the file inside it).
  MPI_Count count() const;
  // Predefined elements moved, those of a copy moved in part included:
  // what MPI_Get_elements_x says.
  MPI_Count elements() const;
  // A status MPI reads as this transfer: MPI_Get_count, MPI_Get_elements
  // and MPI_Get_elements_x with datatype() give count() and elements(); not
  // cancelled; MPI_SOURCE and MPI_TAG are MPI_UNDEFINED, MPI_ERROR is
  // MPI_SUCCESS.
  MPI_Status status() const noexcept;

 private:
  std::size_t bytes_ = 0;
  MPI_Datatype datatype_ = MPI_BYTE;
};

}  // namespace flowio
