// Datatypes beyond the int range: MPI-4's large-count constructors
// (MPI_Type_*_c) flatten exactly as their classic twins, and types whose
// size or extent passes 2^31 - 1 bytes flatten compactly with the sizes,
// bounds and pieces MPI gives them.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/flat_type.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/core/piece_cursor.h"

namespace {

using namespace flowio::core;

MPI_Datatype committed(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

std::vector<Piece> pieces_of(const FlatType& type, std::int64_t count) {
  PieceCursor cursor(type, count);
  std::vector<Piece> pieces;
  Piece batch[16];
  while (std::size_t n = cursor.next(batch, INT64_MAX))
    pieces.insert(pieces.end(), batch, batch + n);
  return pieces;
}

// The two types flatten to the same bounds and pieces, and both agree with
// MPI's own size and extent.
void check_twins(MPI_Datatype large_count, MPI_Datatype classic, const std::string& what) {
  CAPTURE(what);
  const FlatType a = flowio::core::flatten(committed(large_count));
  const FlatType b = flowio::core::flatten(committed(classic));
  MPI_Count size = 0, lb = 0, extent = 0;
  MPI_Type_size_x(classic, &size);
  MPI_Type_get_extent_x(classic, &lb, &extent);
  CHECK(a.size() == size);
  CHECK(a.lb() == lb);
  CHECK(a.extent() == extent);
  CHECK(b.size() == a.size());
  CHECK(b.lb() == a.lb());
  CHECK(b.extent() == a.extent());
  CHECK(pieces_of(a, 3) == pieces_of(b, 3));
  MPI_Type_free(&large_count);
  MPI_Type_free(&classic);
}

// First and last piece of one copy, found by seeking the cursor.
Piece piece_at(const FlatType& type, std::int64_t stream_position) {
  PieceCursor cursor(type, 1, 0, stream_position);
  Piece piece;
  REQUIRE(cursor.next_piece(piece, INT64_MAX));
  return piece;
}

}  // namespace

// Every large-count constructor against the classic one with the same
// arguments: the argument layouts of MPI_Type_get_contents_c differ.
TEST_CASE("Core.Flatten.LargeCountConstructorsMatchClassic") {
  MPI_Datatype a, b;
  MPI_Type_contiguous_c(7, MPI_INT, &a);
  MPI_Type_contiguous(7, MPI_INT, &b);
  check_twins(a, b, "contiguous");
  MPI_Type_vector_c(5, 2, 7, MPI_DOUBLE, &a);
  MPI_Type_vector(5, 2, 7, MPI_DOUBLE, &b);
  check_twins(a, b, "vector");
  MPI_Type_create_hvector_c(5, 2, 36, MPI_INT, &a);
  MPI_Type_create_hvector(5, 2, 36, MPI_INT, &b);
  check_twins(a, b, "hvector");
  const MPI_Count lengths_c[] = {1, 3, 2};
  const MPI_Count displacements_c[] = {0, 10, 30};
  const int lengths[] = {1, 3, 2};
  const int displacements[] = {0, 10, 30};
  const MPI_Aint byte_displacements[] = {0, 10, 30};
  MPI_Type_indexed_c(3, lengths_c, displacements_c, MPI_INT, &a);
  MPI_Type_indexed(3, lengths, displacements, MPI_INT, &b);
  check_twins(a, b, "indexed");
  MPI_Type_create_hindexed_c(3, lengths_c, displacements_c, MPI_INT, &a);
  MPI_Type_create_hindexed(3, lengths, byte_displacements, MPI_INT, &b);
  check_twins(a, b, "hindexed");
  MPI_Type_create_indexed_block_c(3, 2, displacements_c, MPI_SHORT, &a);
  MPI_Type_create_indexed_block(3, 2, displacements, MPI_SHORT, &b);
  check_twins(a, b, "indexed_block");
  MPI_Type_create_hindexed_block_c(3, 2, displacements_c, MPI_SHORT, &a);
  MPI_Type_create_hindexed_block(3, 2, byte_displacements, MPI_SHORT, &b);
  check_twins(a, b, "hindexed_block");
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  const MPI_Count struct_displacements_c[] = {0, 8, 40};
  const MPI_Aint struct_displacements[] = {0, 8, 40};
  MPI_Type_create_struct_c(3, lengths_c, struct_displacements_c, types, &a);
  MPI_Type_create_struct(3, lengths, struct_displacements, types, &b);
  check_twins(a, b, "struct");
  MPI_Type_create_resized_c(MPI_INT, -4, 20, &a);
  MPI_Type_create_resized(MPI_INT, -4, 20, &b);
  check_twins(a, b, "resized");
  for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
    const MPI_Count sizes_c[] = {10, 20, 3}, subsizes_c[] = {3, 4, 2}, starts_c[] = {1, 2, 1};
    const int sizes[] = {10, 20, 3}, subsizes[] = {3, 4, 2}, starts[] = {1, 2, 1};
    MPI_Type_create_subarray_c(3, sizes_c, subsizes_c, starts_c, order, MPI_INT, &a);
    MPI_Type_create_subarray(3, sizes, subsizes, starts, order, MPI_INT, &b);
    check_twins(a, b, "subarray");
    const MPI_Count global_c[] = {10, 12};
    const int global[] = {10, 12};
    const int distributions[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    const int arguments[] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
    const int processes[] = {2, 3};
    for (int rank = 0; rank < 6; ++rank) {
      MPI_Type_create_darray_c(6, rank, 2, global_c, distributions, arguments, processes, order,
                               MPI_INT, &a);
      MPI_Type_create_darray(6, rank, 2, global, distributions, arguments, processes, order,
                             MPI_INT, &b);
      check_twins(a, b, "darray rank " + std::to_string(rank));
    }
  }
}

// The sizes of ROMIO's coll_perf and of large per-process arrays: a
// subarray and a darray of more than 2^31 - 1 bytes, and large-count types
// whose counts themselves pass 2^31, flatten to a few nodes with MPI's
// size and extent and the right first and last pieces.
TEST_CASE("Core.Flatten.TypesBeyondTwoGiB") {
  {
    const int sizes[] = {65536, 65536}, subsizes[] = {40000, 65536}, starts[] = {1000, 0};
    MPI_Datatype subarray;
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_BYTE, &subarray);
    const FlatType flat = *flowio::core::flatten_cached(committed(subarray));
    CHECK(flat.size() == std::int64_t{40000} * 65536);
    CHECK(flat.extent() == std::int64_t{65536} * 65536);
    CHECK(flat.node_count() <= 2);
    CHECK(flat.is_contiguous() == false);
    CHECK(piece_at(flat, 0) == Piece{std::int64_t{1000} * 65536, flat.size()});
    MPI_Type_free(&subarray);
  }
  {
    // ROMIO's coll_perf array on 2 processes: 7 GB each.
    const int global[] = {128 * 17, 128 * 9, 128 * 11};
    const int distributions[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    const int arguments[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG,
                             MPI_DISTRIBUTE_DFLT_DARG};
    const int processes[] = {2, 1, 1};
    MPI_Datatype darray;
    MPI_Type_create_darray(2, 1, 3, global, distributions, arguments, processes, MPI_ORDER_C,
                           MPI_INT, &darray);
    const FlatType flat = flowio::core::flatten(committed(darray));
    MPI_Count size = 0, lb = 0, extent = 0;
    MPI_Type_size_x(darray, &size);
    MPI_Type_get_extent_x(darray, &lb, &extent);
    CHECK(size > INT32_MAX);
    CHECK(flat.size() == size);
    CHECK(flat.extent() == extent);
    CHECK(flat.node_count() <= 3);
    const std::int64_t half = std::int64_t{128 * 17 / 2} * 128 * 9 * 128 * 11 * 4;
    CHECK(piece_at(flat, 0).offset == half);
    CHECK(piece_at(flat, size - 1) == Piece{2 * half - 1, 1});
    MPI_Type_free(&darray);
  }
  {
    MPI_Datatype bytes;
    MPI_Type_contiguous_c(MPI_Count{3} << 30, MPI_BYTE, &bytes);
    const FlatType flat = *flowio::core::flatten_cached(committed(bytes));
    CHECK(flat.size() == (std::int64_t{3} << 30));
    CHECK(flat.is_contiguous());
    MPI_Type_free(&bytes);
  }
  {
    // 3 * 2^30 blocks: a count that is no int.
    MPI_Datatype vector;
    MPI_Type_vector_c(MPI_Count{3} << 30, 1, 2, MPI_BYTE, &vector);
    const FlatType flat = flowio::core::flatten(committed(vector));
    CHECK(flat.size() == (std::int64_t{3} << 30));
    CHECK(flat.node_count() <= 2);
    CHECK(piece_at(flat, flat.size() - 1) == Piece{2 * (flat.size() - 1), 1});
    MPI_Type_free(&vector);
  }
  {
    const MPI_Count lengths[] = {8, 8};
    const MPI_Count displacements[] = {0, MPI_Count{5} << 31};
    MPI_Datatype far;
    MPI_Type_create_hindexed_c(2, lengths, displacements, MPI_BYTE, &far);
    const FlatType flat = flowio::core::flatten(committed(far));
    CHECK(flat.size() == 16);
    CHECK(flat.extent() == (std::int64_t{5} << 31) + 8);
    CHECK(piece_at(flat, 8) == Piece{std::int64_t{5} << 31, 8});
    MPI_Type_free(&far);
  }
}
