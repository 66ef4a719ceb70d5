// Data representations: how typed data is stored in a file (MPI 4.1, 14.5).
// File::set_view takes a representation's name:
//   "native"      bytes as they are in memory (the default);
//   "internal"    flowio's choice, which is native;
//   "external32"  the portable one: big-endian, IEEE floating point, the
//                 sizes MPI fixes for each predefined type (MPI_LONG 4
//                 bytes, MPI_LONG_DOUBLE a 16-byte IEEE quad, no padding in
//                 value-index pairs);
//   any name registered with register_data_representation.
// Under a representation other than native, views are laid out in the
// file's sizes (an etype MPI_LONG takes 4 bytes of external32), offsets and
// the file pointers count those etypes, and data is converted on its way
// to and from the file, one buffer iteration at a time in collective calls.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

namespace flowio {

// A user-defined representation, as MPI_Register_datarep describes it.
// The functions are called from flowio's threads, several at once.
struct UserRepresentation {
  // MPI's read_conversion_fn / write_conversion_fn: convert `count` data
  // items between `filebuf` (file representation, items packed) and
  // `userbuf` laid out by `datatype` (tiled over userbuf), starting at item
  // `position` of that tiling (`datatype` is equivalent to the one passed
  // to the data call: a duplicate, for a derived one, so that it outlives
  // the caller's). Return MPI_SUCCESS, or an error that fails
  // the data access with ErrorCode::conversion. Empty: no conversion, the
  // data is accessed as native bytes (MPI_CONVERSION_FN_NULL).
  using Conversion = std::function<int(void* userbuf, MPI_Datatype datatype, MPI_Count count,
                                       void* filebuf, MPI_Offset position)>;
  Conversion read;
  Conversion write;
  // MPI's dtype_file_extent_fn: the bytes one item of the predefined
  // `datatype` takes in the file. Required.
  std::function<int(MPI_Datatype datatype, MPI_Aint* file_extent)> file_extent;
};

// Registers `name` for this process, for good (MPI_Register_datarep is
// local and cannot be undone either). Throws UsageError with
// ErrorCode::duplicate_representation when the name is taken (the
// predefined names included), ErrorCode::invalid_argument when `name` is
// empty or longer than MPI_MAX_DATAREP_STRING - 1 or file_extent is empty.
// Thread safe.
void register_data_representation(const std::string& name, UserRepresentation representation);

}  // namespace flowio
