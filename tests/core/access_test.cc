// Access: a view with a stream range and the explicit list of the same
// pieces answer every query alike, and both agree with a byte-by-byte
// model of the data.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "tests/core/access_checks.h"

namespace {

using namespace flowio::core;
using namespace flowio::core::testing;

}  // namespace

// An access with no data answers zero everywhere and visits nothing.
TEST_CASE("Core.Access.Empty") {
  std::mt19937_64 rng(1);
  const auto view = std::make_shared<const FileView>();
  for (const Access& access :
       {Access(), Access(std::vector<Piece>{}), Access(view, 5, 5), Access(view, 9, 3)}) {
    CHECK(access.empty());
    CHECK(access.estimated_pieces() == 0);
    CHECK(access.next_data_at_or_after(17) == 0);
    CHECK(check_access(access, {}, rng) == "");
  }
}

// A vector view over a known stream range, checked by hand.
TEST_CASE("Core.Access.VectorView") {
  MPI_Datatype vector;
  MPI_Type_vector(4, 2, 5, MPI_BYTE, &vector);  // 2 bytes every 5, extent 17
  MPI_Type_commit(&vector);
  const auto view = std::make_shared<const FileView>(100, MPI_BYTE, vector);
  MPI_Type_free(&vector);
  const Access access(view, 3, 11);  // stream bytes 3..10: tile 0 bytes 3..7, tile 1 bytes 0..2
  CHECK(access.bytes() == 8);
  CHECK(access.file_begin() == 106);
  CHECK(access.file_end() == 123);
  CHECK(access.bytes_before(110) == 1);
  CHECK(access.offset_of(5) == 117);
  CHECK(access.next_data_at_or_after(112) == 115);
  const std::vector<Piece> truth = {{106, 1}, {110, 2}, {115, 2}, {117, 2}, {122, 1}};
  CHECK(view_pieces(*view, 3, 11) == joined(truth));
  std::mt19937_64 rng(2);
  CHECK(check_access(access, joined(truth), rng) == "");
  CHECK(check_access(Access(truth), joined(truth), rng) == "");
}

// For random views and stream ranges, the view access and the list of its
// pieces agree with the model; the list's estimate is its length.
TEST_CASE("Core.Access.RandomViewsAgreeWithPieceLists") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const auto random = random_view(rng);
    CAPTURE(random.description);
    const auto [stream_begin, stream_end] = random_stream_range(rng, random.filetype_size, true);
    CAPTURE(stream_begin);
    CAPTURE(stream_end);
    const std::vector<Piece> truth = view_pieces(*random.view, stream_begin, stream_end);
    std::int64_t covered = 0;
    std::int64_t stream = stream_begin;
    for (const Piece& piece : truth) {
      // The pieces are where the view puts the stream.
      REQUIRE(random.view->file_offset_of(stream) == piece.offset);
      covered += piece.length;
      stream += piece.length;
    }
    REQUIRE(covered == stream_end - stream_begin);

    const Access by_view(random.view, stream_begin, stream_end);
    const Access by_list(truth);
    CHECK(by_list.estimated_pieces() == std::ssize(truth));
    CHECK(check_access(by_view, truth, rng) == "");
    CHECK(check_access(by_list, truth, rng) == "");
  }
}

// Lists with touching pieces (not joined) answer as the joined list does;
// their estimate is still their own length.
TEST_CASE("Core.Access.RandomListsWithTouchingPieces") {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Piece> pieces;
    std::int64_t offset = static_cast<std::int64_t>(rng() % 50);
    const int count = static_cast<int>(rng() % 40) + 1;
    for (int i = 0; i < count; ++i) {
      const std::int64_t gap = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 30);
      const std::int64_t length = static_cast<std::int64_t>(rng() % 20) + 1;
      pieces.push_back(Piece{offset + gap, length});
      offset += gap + length;
    }
    const Access access(pieces);
    CHECK(access.estimated_pieces() == std::ssize(pieces));
    CHECK(check_access(access, joined(pieces), rng) == "");
  }
}

// A contiguous view spanning many tiles is estimated as one piece at
// least, and a huge range of a strided view still answers correctly.
TEST_CASE("Core.Access.LargeRanges") {
  std::mt19937_64 rng(13);
  const auto bytes = std::make_shared<const FileView>();
  const Access contiguous(bytes, 1000, 1 << 20);
  CHECK(contiguous.estimated_pieces() >= 1);
  CHECK(check_access(contiguous, {Piece{1000, (1 << 20) - 1000}}, rng) == "");

  MPI_Datatype vector;
  MPI_Type_vector(1000, 3, 7, MPI_BYTE, &vector);
  MPI_Type_commit(&vector);
  const auto strided = std::make_shared<const FileView>(11, MPI_BYTE, vector);
  MPI_Type_free(&vector);
  const std::int64_t stream_end = 3 * 3000 + 1234;
  const std::vector<Piece> truth = view_pieces(*strided, 5, stream_end);
  const Access access(strided, 5, stream_end);
  CHECK(access.estimated_pieces() >= std::ssize(truth));
  CHECK(check_access(access, truth, rng) == "");
}
