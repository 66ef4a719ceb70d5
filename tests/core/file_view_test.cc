// FileView: validation as MPI requires, and the mapping between the view's
// byte stream and file offsets in both directions.
#include <doctest/doctest.h>
#include <mpi.h>

#include <random>
#include <string>

#include "flowio/error.h"
#include "runtime/core/file_view.h"
#include "tests/support/random_types.h"

namespace {

using flowio::core::FileView;
using flowio::core::Piece;

MPI_Datatype committed(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

// Filetypes MPI forbids are refused with invalid_datatype.
TEST_CASE("Core.FileView.RejectsInvalidFiletypes") {
  int lengths[] = {1, 1};
  int decreasing[] = {4, 0};
  MPI_Datatype backwards = committed([&] {
    MPI_Datatype t;
    MPI_Type_indexed(2, lengths, decreasing, MPI_INT, &t);
    return t;
  }());
  CHECK_THROWS_AS(FileView(0, MPI_INT, backwards), flowio::UsageError);
  int overlapping_lengths[] = {2, 2};
  int overlapping[] = {0, 1};
  MPI_Datatype overlap;
  MPI_Type_indexed(2, overlapping_lengths, overlapping, MPI_INT, &overlap);
  CHECK_THROWS_AS(FileView(0, MPI_INT, committed(overlap)), flowio::UsageError);
  MPI_Datatype three_bytes;
  MPI_Type_contiguous(3, MPI_BYTE, &three_bytes);
  CHECK_THROWS_AS(FileView(0, MPI_INT, committed(three_bytes)), flowio::UsageError);
  MPI_Datatype shrunk;
  MPI_Type_create_resized(MPI_DOUBLE, 0, 4, &shrunk);
  CHECK_THROWS_AS(FileView(0, MPI_BYTE, committed(shrunk)), flowio::UsageError);
  CHECK_THROWS_AS(FileView(-1, MPI_BYTE, MPI_BYTE), flowio::UsageError);
  try {
    FileView(0, MPI_INT, backwards);
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::invalid_datatype);
    CHECK(std::string(error.what()).find("monotonically") != std::string::npos);
  }
  for (MPI_Datatype* t : {&backwards, &overlap, &three_bytes, &shrunk}) MPI_Type_free(t);
}

// A vector view maps stream bytes to the right file offsets and back.
TEST_CASE("Core.FileView.VectorMapping") {
  MPI_Datatype vector;
  MPI_Type_vector(3, 2, 5, MPI_INT, &vector);  // 8 data bytes every 20, extent 48
  const FileView view(100, MPI_INT, committed(vector));
  CHECK(view.file_offset_of(0) == 100);
  CHECK(view.file_offset_of(8) == 120);
  CHECK(view.file_offset_of(24) == 148);  // second tile
  CHECK(view.stream_bytes_before(100) == 0);
  CHECK(view.stream_bytes_before(104) == 4);
  CHECK(view.stream_bytes_before(110) == 8);  // in the hole
  CHECK(view.stream_bytes_before(148) == 24);
  auto cursor = view.file_pieces(4);
  Piece pieces[3];
  REQUIRE(cursor.next(pieces, 20) == 3);
  CHECK(pieces[0] == Piece{104, 4});
  CHECK(pieces[1] == Piece{120, 8});
  CHECK(pieces[2] == Piece{140, 8});
  MPI_Type_free(&vector);
}

// For random monotone filetypes, stream_bytes_before inverts file_offset_of.
TEST_CASE("Core.FileView.RandomRoundTrip") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string description;
    MPI_Datatype type = flowio::testing::random_datatype(rng, flowio::testing::TypeShape::monotone,
                                                         2048, &description);
    CAPTURE(description);
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    if (size > 0) {
      const FileView view(static_cast<std::int64_t>(rng() % 100), MPI_BYTE, type);
      for (int probe = 0; probe < 20; ++probe) {
        const std::int64_t position = static_cast<std::int64_t>(rng() % (3 * size));
        const std::int64_t offset = view.file_offset_of(position);
        CHECK(view.stream_bytes_before(offset) == position);
        CHECK(view.stream_bytes_before(offset + 1) == position + 1);
      }
    }
    MPI_Type_free(&type);
  }
}
