// The flattened-type cache: one flattening per derived type, kept on the
// type, dropped when the program frees it, never confused with a later type
// that gets the same handle.
#include <doctest/doctest.h>
#include <mpi.h>

#include <memory>

#include "runtime/core/flat_type.h"
#include "runtime/core/flat_type_cache.h"

namespace {

using flowio::core::flatten_cached;
using flowio::core::FlatType;

MPI_Datatype committed_vector(int count, int stride) {
  MPI_Datatype type;
  MPI_Type_vector(count, 1, stride, MPI_INT, &type);
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

TEST_CASE("Core.FlatTypeCache.SecondCallReusesTheFirstFlattening") {
  MPI_Datatype type = committed_vector(100, 3);
  const std::shared_ptr<const FlatType> first = flatten_cached(type);
  const std::shared_ptr<const FlatType> second = flatten_cached(type);
  CHECK(first.get() == second.get());
  CHECK(first->size() == 400);
  MPI_Type_free(&type);
  // Still usable by whoever holds it after the type is gone.
  CHECK(first->extent() == (99 * 3 + 1) * 4);
}

TEST_CASE("Core.FlatTypeCache.AFreedHandleReusedByAnotherTypeIsFlattenedAgain") {
  // MPICH hands out freed handles again; each new type must get its own
  // flattening whatever its handle.
  for (int round = 1; round <= 20; ++round) {
    MPI_Datatype type = committed_vector(round, 2);
    const std::shared_ptr<const FlatType> flat = flatten_cached(type);
    CHECK(flat->size() == 4 * round);
    CHECK(flat->extent() == ((round - 1) * 2 + 1) * 4);
    MPI_Type_free(&type);
  }
}

TEST_CASE("Core.FlatTypeCache.NamedTypesAndDuplicates") {
  CHECK(flatten_cached(MPI_DOUBLE)->size() == 8);
  MPI_Datatype type = committed_vector(10, 4);
  MPI_Datatype copy;
  MPI_Type_dup(type, &copy);
  const auto original = flatten_cached(type);
  const auto duplicate = flatten_cached(copy);
  CHECK(original.get() != duplicate.get());  // MPI_Type_dup does not copy the cache
  CHECK(duplicate->size() == original->size());
  MPI_Type_free(&copy);
  MPI_Type_free(&type);
}
