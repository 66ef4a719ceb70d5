// Flattening checked against MPI itself: sizes and bounds against
// MPI_Type_size / get_extent / get_true_extent, piece order and content
// against MPI_Pack and MPI_Unpack, over fixed and random nested types.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/piece_cursor.h"
#include "tests/support/random_types.h"

namespace {

using namespace flowio::core;

std::vector<Piece> all_pieces(const FlatType& type, std::int64_t count, std::int64_t origin = 0,
                              std::int64_t start = 0) {
  PieceCursor cursor(type, count, origin, start);
  std::vector<Piece> pieces;
  Piece batch[7];
  while (std::size_t n = cursor.next(batch, INT64_MAX))
    pieces.insert(pieces.end(), batch, batch + n);
  return pieces;
}

// Packs `count` copies of `type` from a patterned buffer with MPI_Pack and
// with the flattened pieces, from the start and from random positions, and
// unpacks a random stream both ways; everything must agree byte for byte.
void check_against_mpi(MPI_Datatype type, int count, std::mt19937_64& rng,
                       const std::string& description) {
  CAPTURE(description);
  CAPTURE(count);
  const FlatType flat = flowio::core::flatten(type);
  MPI_Count size, lb, extent, true_lb, true_extent;
  MPI_Type_size_x(type, &size);
  MPI_Type_get_extent_x(type, &lb, &extent);
  MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  REQUIRE(flat.size() == size);
  REQUIRE(flat.lb() == lb);
  REQUIRE(flat.extent() == extent);
  if (size * count == 0) {
    REQUIRE(all_pieces(flat, count).empty());
    return;
  }
  // MPICH 4.0.2 reports darray true bounds that ignore the true lower
  // bound of the old type, while packing the right bytes; the pieces
  // themselves are the ground truth checked below.
  if (description.find("darray") == std::string::npos) {
    REQUIRE(flat.true_lb() == true_lb);
    REQUIRE(flat.true_extent() == true_extent);
  }
  {
    std::int64_t lowest = INT64_MAX, highest = INT64_MIN;
    for (const Piece& piece : all_pieces(flat, 1)) {
      lowest = std::min(lowest, piece.offset);
      highest = std::max(highest, piece.offset + piece.length);
    }
    REQUIRE(flat.true_lb() == lowest);
    REQUIRE(flat.true_extent() == highest - lowest);
  }

  const std::int64_t reach = (count - 1) * flat.extent();
  const std::int64_t low = flat.true_lb() + std::min<std::int64_t>(0, reach);
  const std::int64_t high = flat.true_lb() + flat.true_extent() + std::max<std::int64_t>(0, reach);
  std::vector<unsigned char> memory(static_cast<std::size_t>(high - low) + 1);
  for (auto& byte : memory) byte = static_cast<unsigned char>(rng());
  unsigned char* origin = memory.data() - low;

  const std::int64_t stream = size * count;
  std::vector<unsigned char> packed(static_cast<std::size_t>(stream) + 1);
  int position = 0;
  {
    REQUIRE(MPI_Pack(origin, count, type, packed.data(), static_cast<int>(packed.size()), &position,
                     MPI_COMM_SELF) == MPI_SUCCESS);
  }
  REQUIRE(position == stream);

  const auto origin_address = reinterpret_cast<std::int64_t>(origin);
  std::vector<unsigned char> gathered;
  for (const Piece& piece : all_pieces(flat, count, origin_address)) {
    REQUIRE(piece.length > 0);
    const auto* bytes = reinterpret_cast<const unsigned char*>(piece.offset);
    gathered.insert(gathered.end(), bytes, bytes + piece.length);
  }
  REQUIRE(gathered.size() == static_cast<std::size_t>(stream));
  REQUIRE(std::memcmp(gathered.data(), packed.data(), gathered.size()) == 0);

  // Seeking: any window of the stream, from any start.
  for (int trial = 0; trial < 4 && stream > 0; ++trial) {
    const std::int64_t start =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(stream));
    const std::int64_t length =
        1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(stream - start));
    PieceCursor cursor(flat, count, origin_address, start);
    std::vector<unsigned char> window;
    Piece batch[3];
    while (std::size_t n = cursor.next(batch, length - static_cast<std::int64_t>(window.size()))) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(batch[i].offset);
        window.insert(window.end(), bytes, bytes + batch[i].length);
      }
    }
    CAPTURE(start);
    REQUIRE(window.size() == static_cast<std::size_t>(length));
    REQUIRE(std::memcmp(window.data(), packed.data() + start, window.size()) == 0);
    REQUIRE(cursor.position() == start + length);
  }

  // Unpacking: a random stream scattered by MPI_Unpack and by the pieces.
  std::vector<unsigned char> source(static_cast<std::size_t>(stream) + 1);
  for (auto& byte : source) byte = static_cast<unsigned char>(rng());
  std::vector<unsigned char> by_mpi(memory.size(), 0), by_pieces(memory.size(), 0);
  position = 0;
  REQUIRE(MPI_Unpack(source.data(), static_cast<int>(source.size()), &position, by_mpi.data() - low,
                     count, type, MPI_COMM_SELF) == MPI_SUCCESS);
  std::int64_t consumed = 0;
  for (const Piece& piece : all_pieces(flat, count, -low)) {
    std::memcpy(by_pieces.data() + piece.offset, source.data() + consumed,
                static_cast<std::size_t>(piece.length));
    consumed += piece.length;
  }
  REQUIRE(by_mpi == by_pieces);
}

MPI_Datatype committed(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

// Every named type, including the value-index pairs with holes.
TEST_CASE("Core.Flatten.NamedTypes") {
  std::mt19937_64 rng(1);
  for (MPI_Datatype type :
       {MPI_BYTE, MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_FLOAT_INT, MPI_DOUBLE_INT,
        MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_C_DOUBLE_COMPLEX}) {
    check_against_mpi(type, 3, rng, "named");
  }
}

// A vector of a million blocks flattens to a handful of numbers, and the
// same pattern written out block by block (hindexed) folds to the same size.
TEST_CASE("Core.Flatten.VectorIsCompact") {
  MPI_Datatype vector;
  MPI_Type_vector(1000000, 2, 5, MPI_INT, &vector);
  const FlatType flat = flowio::core::flatten(vector);
  CHECK(flat.node_count() <= 2);
  CHECK(flat.block_count() <= 1);
  CHECK(flat.size() == 8000000);
  std::vector<MPI_Aint> displacements(1000);
  std::vector<int> lengths(1000, 2);
  for (int i = 0; i < 1000; ++i) displacements[i] = 20 * i;
  MPI_Datatype enumerated;
  MPI_Type_create_hindexed(1000, lengths.data(), displacements.data(), MPI_INT, &enumerated);
  const FlatType folded = flowio::core::flatten(enumerated);
  CHECK(folded.block_count() <= 1);
  std::mt19937_64 rng(2);
  check_against_mpi(committed(enumerated), 2, rng, "hindexed progression");
  MPI_Type_free(&vector);
  MPI_Type_free(&enumerated);
}

// Zero-length blocks, negative displacements and resized bounds.
TEST_CASE("Core.Flatten.EdgeCases") {
  std::mt19937_64 rng(3);
  int lengths[] = {0, 2, 0, 1};
  int displacements[] = {5, -3, 7, 4};
  MPI_Datatype indexed;
  MPI_Type_indexed(4, lengths, displacements, MPI_DOUBLE, &indexed);
  check_against_mpi(committed(indexed), 3, rng, "indexed with zeros and negatives");
  MPI_Datatype resized;
  MPI_Type_create_resized(indexed, -40, 100, &resized);
  check_against_mpi(committed(resized), 4, rng, "resized");
  const FlatType flat = flowio::core::flatten(resized);
  CHECK(flat.lb() == -40);
  CHECK(flat.extent() == 100);
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  const FlatType nothing = flowio::core::flatten(committed(empty));
  CHECK(nothing.size() == 0);
  CHECK(all_pieces(nothing, 5).empty());
  MPI_Type_free(&indexed);
  MPI_Type_free(&resized);
  MPI_Type_free(&empty);
}

// Subarrays in both orders and darrays of every distribution.
TEST_CASE("Core.Flatten.SubarrayAndDarray") {
  std::mt19937_64 rng(4);
  const int sizes[] = {6, 5, 4}, subsizes[] = {3, 2, 4}, starts[] = {1, 3, 0};
  for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
    MPI_Datatype subarray;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, order, MPI_DOUBLE, &subarray);
    check_against_mpi(committed(subarray), 2, rng, "subarray");
    MPI_Type_free(&subarray);
    const int global[] = {7, 9}, processes[] = {2, 3};
    const int distributions[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    const int arguments[] = {2, MPI_DISTRIBUTE_DFLT_DARG};
    for (int rank = 0; rank < 6; ++rank) {
      MPI_Datatype darray;
      MPI_Type_create_darray(6, rank, 2, global, distributions, arguments, processes, order,
                             MPI_INT, &darray);
      check_against_mpi(committed(darray), 2, rng, "darray rank " + std::to_string(rank));
      MPI_Type_free(&darray);
    }
  }
}

// Random nesting of every constructor, monotone and in any order.
TEST_CASE("Core.Flatten.RandomNestedTypes") {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 1500; ++trial) {
    const auto shape =
        trial % 2 ? flowio::testing::TypeShape::monotone : flowio::testing::TypeShape::any_order;
    std::string description;
    MPI_Datatype type = flowio::testing::random_datatype(rng, shape, 4096, &description);
    check_against_mpi(type, 1 + static_cast<int>(rng() % 3), rng,
                      "trial " + std::to_string(trial) + ": " + description);
    MPI_Type_free(&type);
  }
}

// MPI_DATATYPE_NULL is refused with a typed error.
TEST_CASE("Core.Flatten.NullIsAnError") {
  CHECK_THROWS_AS(flowio::core::flatten(MPI_DATATYPE_NULL), flowio::UsageError);
}
