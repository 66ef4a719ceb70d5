// Random MPI datatypes for differential tests: nested constructors of every
// kind the flattener knows, small enough to pack in memory.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <random>
#include <string>

namespace flowio::testing {

enum class TypeShape {
  // Pieces never decrease in address and never overlap, and copies tile
  // the same way: what MPI requires of etypes and filetypes.
  monotone,
  // Pieces do not overlap, but may come in any order and at negative
  // displacements: what a memory type may look like.
  any_order,
};

// Which constructs may appear. ROMIO (MPICH 4.0.2) disagrees with the
// typemap, as MPI_Pack defines it, for constructs in file views: the
// value-index pair types (MPI_DOUBLE_INT, ...), which it takes as
// contiguous; resized types with a nonzero lower bound, whose copies it
// shifts by that bound; blocks of length zero, on which it overruns its
// own buffer; and darrays nested inside other constructors. Filetypes compared against ROMIO leave
// them out.
enum class Constructs { all, romio_file_view_safe };

// A committed random datatype (free it with MPI_Type_free) holding at most
// about `max_bytes` bytes of data. `description` receives a readable
// constructor expression, for failure messages.
MPI_Datatype random_datatype(std::mt19937_64& rng, TypeShape shape, std::int64_t max_bytes,
                             std::string* description, Constructs constructs = Constructs::all);

}  // namespace flowio::testing
