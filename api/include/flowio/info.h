// Hints and MPI_Info, both ways: for programs and libraries that keep their
// hints in an MPI_Info (as MPI-IO programs, HDF5 and ADIOS2 do) and for
// handing flowio's hints to MPI.
//
//   flowio::File file = flowio::File::open(comm, path, mode,
//                                          flowio::hints_from_info(info));
//   flowio::Info used(file.hints());       // an MPI_Info, freed with `used`
//   MPI_Info_get_nkeys(used.get(), &keys);
//
// Thread safety: these call MPI, which flowio runs at MPI_THREAD_MULTIPLE;
// any thread may make them, one at a time per Info.
#pragma once

#include <mpi.h>

#include "flowio/hints.h"

namespace flowio {

// Every key of `info` with its value; none for MPI_INFO_NULL. Throws
// MpiError when MPI refuses `info` (a freed handle, for instance).
Hints hints_from_info(MPI_Info info);

// An MPI_Info holding a copy of some Hints, freed when the Info is
// destroyed (unless MPI is finalized by then). Move-only, like the handle
// it owns: declaring the moves deletes the copies.
class Info {
 public:
  // MPI_INFO_NULL.
  Info() noexcept = default;
  // A new MPI_Info with every key and value of `hints`. Throws MpiError
  // when MPI refuses one (a key longer than MPI_MAX_INFO_KEY, a value
  // longer than MPI_MAX_INFO_VAL).
  explicit Info(const Hints& hints);
  ~Info();

  // The handle, to pass to MPI; still owned by this Info.
  MPI_Info get() const noexcept { return info_; }
  // Gives the handle up: the caller frees it (MPI_Info_free), and this
  // Info holds MPI_INFO_NULL.
  MPI_Info release() noexcept;

  // The handle moves with the Info; the one left behind holds MPI_INFO_NULL.
  Info(Info&& other) noexcept;
  Info& operator=(Info&& other) noexcept;

 private:
  void free() noexcept;

  MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace flowio
