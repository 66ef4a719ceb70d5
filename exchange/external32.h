// The external32 data representation (MPI 4.1, 14.5.2): every predefined
// type big-endian, in the size MPI's table fixes for it, IEEE floating
// point (MPI_LONG_DOUBLE a 16-byte IEEE quad), complex types as two of
// their parts. On this platform (x86-64 Linux) most types keep their size
// and are byte-swapped; MPI_LONG and MPI_UNSIGNED_LONG shrink from 8 to 4
// bytes and MPI_WCHAR from 4 to 2 (truncated when stored, widened with
// sign or zero when read, as MPICH's MPI_Pack_external does), and
// MPI_LONG_DOUBLE changes format (x87 extended <-> IEEE quad).
//
// Pure functions; thread safe.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace flowio::exchange {

// Bytes of one element of predefined `type` in external32, or -1 when
// external32 has no form for it (MPI_DATATYPE_NULL, types this MPI build
// lacks, parameterized Fortran types).
std::int64_t external32_size(MPI_Datatype type);

// True when external32 stores `type` exactly as memory holds it (one-byte
// types), so that its elements need no conversion.
bool external32_keeps_bytes(MPI_Datatype type);

// The unit whose byte order external32 reverses in `type` (2, 4, 8 or 16
// bytes; a complex type is two units), when that is all it does (the
// type keeps its size, core/byte_order.h); 0 for the types it converts
// otherwise, keeps as they are, or has no form for.
std::int64_t external32_reversed_unit(MPI_Datatype type);

// Converts `count` consecutive elements of `type` (external32_size(type)
// >= 0) from native bytes to external32 bytes, and back. The buffers do
// not overlap; neither needs any alignment.
void to_external32(MPI_Datatype type, std::int64_t count, const char* native, char* file);
void from_external32(MPI_Datatype type, std::int64_t count, const char* file, char* native);

}  // namespace flowio::exchange
