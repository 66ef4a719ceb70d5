// Types whose data is one run are walked as one run, whatever their lower
// bound or the offset of the run: found by the metadata fuzzer
// (tests/fuzz), where a 1-byte run resized to lb 40 made a view that was
// walked byte by byte, and an access of 42 TB through it never finished.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>

#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "runtime/core/piece_cursor.h"

namespace flowio::core {

// A run with a lower bound below its data tiles into one run.
TEST_CASE("Core.Contiguity.RunWithALowerBound") {
  MPI_Datatype shifted;
  MPI_Type_create_resized(MPI_BYTE, 40, 1, &shifted);
  const FlatType flat = flatten(shifted);
  CHECK(flat.is_contiguous());
  // 2^40 copies: one piece, at once (a step per copy would never end).
  PieceCursor cursor(flat, std::int64_t{1} << 40, 1000);
  Piece piece;
  REQUIRE(cursor.next_piece(piece, INT64_MAX));
  CHECK(piece == Piece{1000, std::int64_t{1} << 40});
  CHECK_FALSE(cursor.next_piece(piece, INT64_MAX));
  MPI_Type_free(&shifted);
}

// A single block away from the type's origin: one run per copy, and the
// copies touch when the extent is the size.
TEST_CASE("Core.Contiguity.RunAwayFromTheOrigin") {
  const int length = 4;
  const MPI_Aint displacement = 8;
  MPI_Datatype block, touching;
  MPI_Type_create_hindexed(1, &length, &displacement, MPI_INT, &block);
  MPI_Type_create_resized(block, 8, 16, &touching);
  const FlatType single = flatten(block);
  CHECK(single.is_single_run());
  CHECK(single.true_lb() == 8);
  const FlatType flat = flatten(touching);
  CHECK(flat.is_contiguous());
  int memory[16] = {0};
  const MemoryLayout layout{&flat, 3, reinterpret_cast<std::int64_t>(memory)};
  CHECK(layout.contiguous());
  CHECK(layout.address_of(0) == reinterpret_cast<std::int64_t>(memory) + 8);
  PieceCursor cursor(flat, 3, 100);
  Piece piece;
  REQUIRE(cursor.next_piece(piece, INT64_MAX));
  CHECK(piece == Piece{108, 48});
  MPI_Type_free(&block);
  MPI_Type_free(&touching);
}

// Runs in decreasing order are not one run, even without holes.
TEST_CASE("Core.Contiguity.DecreasingRunsAreNot") {
  const int lengths[2] = {2, 2};
  const MPI_Aint displacements[2] = {2, 0};
  MPI_Datatype backwards;
  MPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &backwards);
  const FlatType flat = flatten(backwards);
  CHECK_FALSE(flat.is_single_run());
  CHECK_FALSE(flat.is_contiguous());
  MPI_Type_free(&backwards);
}

}  // namespace flowio::core
