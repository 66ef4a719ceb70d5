// require_committed: committed types of any size pass (a 2.25 GiB subarray
// made the 32-bit MPI_Pack_size overflow and read as freed), uncommitted,
// null and freed types are refused, whatever their size.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/datatype_checks.h"

namespace {

using flowio::core::require_committed;

// 1024 x 1024 x `depth` doubles, the part of one process in a global
// array twice as deep.
MPI_Datatype subarray_of_doubles(int depth) {
  const int sizes[] = {1024, 1024, 2 * depth};
  const int subsizes[] = {1024, 1024, depth};
  const int starts[] = {0, 0, depth};
  MPI_Datatype type;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
  return type;
}

bool refused(MPI_Datatype type) {
  try {
    require_committed(type, "the datatype");
  } catch (const flowio::UsageError& error) {
    return error.code() == flowio::ErrorCode::invalid_datatype;
  }
  return false;
}

}  // namespace

TEST_CASE("Core.DatatypeChecks.CommittedTypesOfAnySizePass") {
  // 2.25 GiB (past 2^31) and 4.5 GiB (past 2^32) of data.
  for (const int depth : {288, 576}) {
    CAPTURE(depth);
    MPI_Datatype type = subarray_of_doubles(depth);
    MPI_Type_commit(&type);
    MPI_Count size = 0;
    MPI_Type_size_c(type, &size);
    REQUIRE(size == std::int64_t{1024} * 1024 * depth * 8);
    CHECK_FALSE(refused(type));
    MPI_Type_free(&type);
  }
  // A large-count constructor's type of 2^40 bytes.
  MPI_Datatype tebibyte;
  MPI_Type_contiguous_c(MPI_Count{1} << 40, MPI_BYTE, &tebibyte);
  MPI_Type_commit(&tebibyte);
  CHECK_FALSE(refused(tebibyte));
  MPI_Type_free(&tebibyte);
  CHECK_FALSE(refused(MPI_BYTE));
  CHECK_FALSE(refused(MPI_DOUBLE));
}

TEST_CASE("Core.DatatypeChecks.NullAndUncommittedTypesAreRefused") {
  CHECK(refused(MPI_DATATYPE_NULL));
  MPI_Datatype small, large = subarray_of_doubles(288);
  MPI_Type_vector(4, 2, 8, MPI_INT, &small);
  CHECK(refused(small));
  CHECK(refused(large));
  MPI_Type_free(&small);
  MPI_Type_free(&large);
}

// Freed types of every size, freed alone and after others (their handles
// are then on MPICH's free list at different places).
TEST_CASE("Core.DatatypeChecks.FreedTypesAreRefused") {
  std::vector<MPI_Datatype> types;
  for (const int depth : {1, 288, 576}) {
    MPI_Datatype contiguous, subarray = subarray_of_doubles(depth);
    MPI_Type_contiguous(depth, MPI_INT, &contiguous);
    types.push_back(contiguous);
    types.push_back(subarray);
  }
  for (MPI_Datatype& type : types) MPI_Type_commit(&type);
  for (MPI_Datatype type : types) {
    const MPI_Datatype stale = type;
    MPI_Type_free(&type);
    CAPTURE(stale);
    CHECK(refused(stale));
  }
}
