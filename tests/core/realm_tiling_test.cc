// RealmTiling: realms described by types partition the file as their
// typemaps say (which slot owns which byte, over several periods, with
// realms of different extents and displacements); realms that overlap or
// leave a byte to no one, types that cannot tile, and lists of the wrong
// length are refused with the byte or count named; equal partitions have
// equal keys however they were described.
#include <doctest/doctest.h>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/realm_tiling.h"

namespace {

using namespace flowio::core;

// A type of the runs [offset, offset + length) with the given extent.
FlatType runs(std::vector<std::pair<std::int64_t, std::int64_t>> list, std::int64_t extent) {
  std::vector<FlatBlock> blocks;
  for (const auto& [offset, length] : list) {
    blocks.push_back(FlatBlock{offset, 1, 0, flowio::core::make_run(length)});
  }
  return FlatType(flowio::core::make_blocks(std::move(blocks)), 0, extent);
}

int owner(const RealmTiling& tiling, std::int64_t x) {
  return tiling.segments()[tiling.segment_at(x)].slot;
}

std::string owners(const RealmTiling& tiling, std::int64_t from, std::int64_t to) {
  std::string text;
  for (std::int64_t x = from; x < to; ++x) text += std::to_string(owner(tiling, x));
  return text;
}

std::string refusal(const std::vector<RealmType>& realms, flowio::ErrorCode& code) {
  try {
    RealmTiling::of_types(realms);
  } catch (const flowio::UsageError& error) {
    code = error.code();
    return error.what();
  }
  return "";
}

}  // namespace

// Round-robin stripes of 3 bytes over 3 slots.
TEST_CASE("Core.RealmTiling.Stripes") {
  const RealmTiling tiling = RealmTiling::stripes(3, 3);
  CHECK(tiling.period() == 9);
  CHECK(tiling.segments().size() == 3);
  CHECK(owners(tiling, 0, 20) == "00011122200011122200");
}

// Realms of extents 4 and 8 (period 8), one of a run that wraps over the
// period's end, displacements beyond the period and below 0.
TEST_CASE("Core.RealmTiling.MixedExtentsAndPhase") {
  const FlatType middle_pairs = runs({{1, 2}}, 4);  // bytes 1-2 of each 4
  const FlatType pair = runs({{0, 2}}, 8);          // at displacement 7: bytes 7, 0
  const FlatType one = runs({{0, 1}}, 8);           // at 11: byte 3; at -4: byte 4
  const RealmTiling tiling = RealmTiling::of_types(
      std::vector<RealmType>{{0, &middle_pairs}, {7, &pair}, {11, &one}, {-4, &one}});
  CHECK(tiling.period() == 8);
  CHECK(owners(tiling, 0, 16) == "1002300110023001");
  CHECK(tiling.segments_of(0).size() == 2);
  CHECK(tiling.segments_of(1).size() == 2);
}

// One MPI type for the first aggregator, moved by its size for the others:
// a 10-byte stripe every 30 bytes gives 3 aggregators round-robin stripes,
// the same partition (and key) as RealmTiling::stripes.
TEST_CASE("Core.RealmTiling.FirstTypeTiled") {
  MPI_Datatype stripe = MPI_DATATYPE_NULL, spaced = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(10, MPI_BYTE, &stripe);
  MPI_Type_create_resized(stripe, 0, 30, &spaced);
  MPI_Type_commit(&spaced);
  const FlatType type = flowio::core::flatten(spaced);
  const RealmTiling tiling = RealmTiling::of_first(RealmType{0, &type}, 3);
  for (std::int64_t x = 0; x < 200; ++x) CHECK(owner(tiling, x) == (x / 10) % 3);
  CHECK(tiling.key() == RealmTiling::stripes(3, 10).key());
  CHECK(tiling.key() != RealmTiling::stripes(3, 11).key());
  CHECK(tiling.key() != RealmTiling::stripes(2, 10).key());
  const RealmTiling moved = RealmTiling::of_first(RealmType{5, &type}, 3);
  for (std::int64_t x = 5; x < 200; ++x) CHECK(owner(moved, x) == ((x - 5) / 10) % 3);
  CHECK(moved.key() != tiling.key());
  // For 2 aggregators the same type leaves bytes 20-29 to no one.
  CHECK_THROWS_WITH_AS(RealmTiling::of_first(RealmType{0, &type}, 2),
                       doctest::Contains("byte 20 of each period of 30 bytes belongs to no realm"),
                       flowio::UsageError);
  MPI_Type_free(&spaced);
  MPI_Type_free(&stripe);
}

// Partitions that are none, and types that cannot tile.
TEST_CASE("Core.RealmTiling.Refused") {
  flowio::ErrorCode code{};
  const FlatType first_half = runs({{0, 5}}, 10);
  const FlatType from_four = runs({{4, 6}}, 10);
  const FlatType from_six = runs({{6, 3}}, 10);
  CHECK(
      refusal({{0, &first_half}, {0, &from_four}}, code)
          .find("byte 4 of each period of 10 bytes belongs to the realms of aggregators 0 and 1") !=
      std::string::npos);
  CHECK(code == flowio::ErrorCode::invalid_argument);
  CHECK(refusal({{0, &first_half}, {0, &from_six}}, code).find("byte 5 of each period") !=
        std::string::npos);
  CHECK(refusal({{0, &first_half}, {0, &from_six}}, code).find("no realm") != std::string::npos);
  CHECK(refusal({{0, &first_half}, {4, &from_six}}, code).find("byte 0 of each period") !=
        std::string::npos);
  const FlatType empty;
  CHECK(refusal({{0, &empty}}, code).find("aggregator 0 holds no data") != std::string::npos);
  CHECK(code == flowio::ErrorCode::invalid_datatype);
  const FlatType overlapping = runs({{0, 8}}, 5);  // copies overlap
  CHECK(refusal({{0, &overlapping}}, code).find("copies overlap") != std::string::npos);
  CHECK(code == flowio::ErrorCode::invalid_datatype);
  const FlatType huge_a = runs({{0, 1}}, (std::int64_t{1} << 39) + 1);
  const FlatType huge_b = runs({{0, 1}}, (std::int64_t{1} << 39) - 1);
  CHECK(refusal({{0, &huge_a}, {1, &huge_b}}, code).find("2^40") != std::string::npos);
  CHECK(refusal({}, code).find("no realm given") != std::string::npos);
  // A list fits only its own aggregator count.
  RealmDescription description;
  auto shared_half = std::make_shared<const FlatType>(runs({{0, 5}}, 10));
  description.displacements = {0, 5};
  description.types = {shared_half, shared_half};
  CHECK(owners(description.tiling(2), 0, 12) == "000001111100");
  CHECK_THROWS_WITH_AS(description.tiling(3), doctest::Contains("2 realms given for 3 aggregators"),
                       flowio::UsageError);
  // One type for all adapts to the count.
  description.one_for_all = true;
  CHECK(owners(description.tiling(2), 0, 10) == "0000011111");
}

// Many pieces per period are refused before memory is spent on them.
TEST_CASE("Core.RealmTiling.TooManyPieces") {
  const std::int64_t pieces = RealmTiling::kMostSegments + 1;
  // Byte 2k to slot 0, byte 2k+1 to slot 1, as one vector-like node.
  const FlatType evens(
      flowio::core::make_blocks({FlatBlock{0, pieces, 2, flowio::core::make_run(1)}}), 0,
      2 * pieces);
  const FlatType odds(
      flowio::core::make_blocks({FlatBlock{1, pieces, 2, flowio::core::make_run(1)}}), 0,
      2 * pieces);
  flowio::ErrorCode code{};
  CHECK(refusal({{0, &evens}, {0, &odds}}, code).find("pieces in one period") != std::string::npos);
  CHECK(code == flowio::ErrorCode::invalid_argument);
}
