// TypeArguments: how a datatype was made, as MPI_Type_get_envelope_c and
// MPI_Type_get_contents_c report it, in one layout whatever constructor
// made it. MPI-4's large-count constructors (MPI_Type_contiguous_c, ...)
// report their counts and displacements in a separate MPI_Count array and
// make the int forms of the queries fail; here every argument is widened
// to 64 bits and laid out as the classic constructors lay out their
// `array_of_integers` and `array_of_addresses` (MPI 4.1, 5.1.13), so that
// readers of a constructor handle one layout.
//
// Needs MPI initialized; no threads of its own.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace flowio::core {

struct TypeArguments {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<std::int64_t> integers;   // the classic array_of_integers
  std::vector<std::int64_t> addresses;  // the classic array_of_addresses
  std::vector<MPI_Datatype> types;
  // The derived types among `types`: MPI_Type_get_contents made them and
  // the caller must MPI_Type_free them once it no longer needs them.
  std::vector<MPI_Datatype> to_free;
};

// The arguments of `type`'s constructor; for a named type (also the F90
// parameterized ones), only the combiner. Throws MpiError when MPI refuses.
TypeArguments read_type_arguments(MPI_Datatype type);

// True for predefined datatypes (combiner MPI_COMBINER_NAMED, or one of the
// MPI_COMBINER_F90_* ones, which stand for a predefined type too).
bool is_named(MPI_Datatype type);

// The value-index pairs of MPI_MINLOC/MPI_MAXLOC (MPI_DOUBLE_INT, MPI_2INT,
// MPI_2REAL, ...) are named types made of two predefined ones. Returns
// true and sets `value` and `index` for those; false for any other type.
bool split_pair_type(MPI_Datatype type, MPI_Datatype& value, MPI_Datatype& index);

}  // namespace flowio::core
