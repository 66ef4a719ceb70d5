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

// MPI lets etypes and filetypes overlap on files not open for writing;
// decreasing or negative displacements stay refused everywhere.
TEST_CASE("Core.FileView.OverlapOnlyWhenReadOnly") {
  const int lengths[] = {3, 1};
  const int overlapping[] = {0, 1};  // [0, 12) and [4, 8): ordered, overlapping
  MPI_Datatype overlap;
  MPI_Type_indexed(2, lengths, overlapping, MPI_INT, &overlap);
  committed(overlap);
  flowio::core::ViewRules read_only;
  read_only.allow_overlap = true;
  CHECK_THROWS_AS(FileView(0, MPI_INT, overlap), flowio::UsageError);
  CHECK_THROWS_AS(FileView(0, overlap, overlap), flowio::UsageError);
  const FileView as_filetype(0, MPI_INT, overlap, read_only);
  CHECK(as_filetype.overlaps());
  const FileView as_etype(0, overlap, overlap, read_only);
  CHECK(as_etype.etype_size() == 16);
  // The stream walks the pieces in typemap order, overlaps included.
  flowio::core::PieceCursor cursor = as_filetype.file_pieces(0);
  Piece pieces[4];
  REQUIRE(cursor.next(pieces, 28) == 3);
  CHECK(pieces[0] == Piece{0, 12});
  CHECK(pieces[1] == Piece{4, 4});
  CHECK(pieces[2] == Piece{12, 12});  // the next tile (extent 12)
  const int decreasing[] = {3, 0};
  const int ones[] = {1, 1};
  MPI_Datatype backwards;
  MPI_Type_indexed(2, ones, decreasing, MPI_INT, &backwards);
  committed(backwards);
  CHECK_THROWS_AS(FileView(0, MPI_INT, backwards, read_only), flowio::UsageError);
  CHECK_THROWS_AS(FileView(0, backwards, backwards, read_only), flowio::UsageError);
  // Tiles that overlap (extent below the true extent) but never go back.
  MPI_Datatype long_run, short_extent;
  MPI_Type_contiguous(4, MPI_INT, &long_run);
  MPI_Type_create_resized(long_run, 0, 8, &short_extent);
  committed(short_extent);
  CHECK_THROWS_AS(FileView(0, MPI_INT, short_extent), flowio::UsageError);
  CHECK(FileView(0, MPI_INT, short_extent, read_only).overlaps());
  // Tiles that go back: a piece at 8 in a type of extent 4 whose last piece starts at 8.
  const int spread[] = {0, 2};
  MPI_Datatype two, going_back;
  MPI_Type_indexed(2, ones, spread, MPI_INT, &two);
  MPI_Type_create_resized(two, 0, 4, &going_back);
  committed(going_back);
  CHECK_THROWS_AS(FileView(0, MPI_INT, going_back, read_only), flowio::UsageError);
  for (MPI_Datatype* t : {&overlap, &backwards, &long_run, &short_extent, &two, &going_back}) {
    MPI_Type_free(t);
  }
}

// In a data representation whose elements have other sizes than in
// memory, etype and filetype are laid out in the file's sizes: element
// counts scale, byte displacements do not.
TEST_CASE("Core.FileView.FileRepresentationExtents") {
  // A representation storing every double in 4 bytes, everything else natively.
  const flowio::core::FileExtentOf extent = [](MPI_Datatype type) -> std::int64_t {
    if (type == MPI_DOUBLE) return 4;
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    return size;
  };
  flowio::core::ViewRules rules;
  rules.file_extent = &extent;
  MPI_Datatype vector;
  MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vector);  // 2 of every 5 doubles
  committed(vector);
  const FileView view(100, MPI_DOUBLE, vector, rules);
  CHECK(view.etype_size() == 4);
  CHECK(view.filetype().size() == 24);
  CHECK(view.filetype().extent() == 4 * 12);
  CHECK(view.file_offset_of(8) == 100 + 20);  // third double: second block, 5 doubles in
  MPI_Datatype hvector;
  MPI_Type_create_hvector(2, 1, 100, MPI_DOUBLE, &hvector);  // bytes: not scaled
  committed(hvector);
  const FileView bytes_view(0, MPI_DOUBLE, hvector, rules);
  CHECK(bytes_view.filetype().extent() == 104);
  CHECK(bytes_view.file_offset_of(4) == 100);
  // Value-index pairs are packed in the file: no hole after the double.
  const FileView pairs(0, MPI_DOUBLE_INT, MPI_DOUBLE_INT, rules);
  CHECK(pairs.etype_size() == 8);
  CHECK(pairs.filetype().extent() == 8);
  CHECK(pairs.is_contiguous());
  MPI_Type_free(&vector);
  MPI_Type_free(&hvector);
}
