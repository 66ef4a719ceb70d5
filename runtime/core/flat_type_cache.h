// The flattened form of a datatype, computed once per datatype and kept on
// the datatype itself as an MPI attribute, so that a program that passes
// the same derived type to call after call (every checkpoint step) pays
// for flattening once. MPI runs the attribute's delete callback when the
// program frees the type, so a freed handle that MPI later reuses for
// another type never finds a stale entry.
#pragma once

#include <mpi.h>

#include <memory>

#include "runtime/core/flat_type.h"

namespace flowio::core {

// flatten(type), cached on `type` when it is a derived type, and in a
// process-wide table for named types (which MPI never frees). Throws as
// flatten() does.
// Thread safe (MPI_THREAD_MULTIPLE): a race computes the form twice and
// keeps one; the FlatType stays alive while any caller holds it, even after
// the program frees the datatype.
std::shared_ptr<const FlatType> flatten_cached(MPI_Datatype type);

}  // namespace flowio::core
