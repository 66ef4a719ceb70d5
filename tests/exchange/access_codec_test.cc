// Access metadata encoding: a decoded access answers every query as the
// encoded one does, view or piece list; a view costs words in proportion to
// its flattened filetype, not to its pieces; and words that are not an
// encoding are refused with MpiError.
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "tests/core/access_checks.h"
#include "tests/support/trials.h"

namespace {

using namespace flowio::core;
using namespace flowio::core::testing;
using namespace flowio::exchange;
using Words = std::vector<std::int64_t>;

// Where the child indices of a view encoding are, read by the layout
// access_codec.cc writes: 8 header words (kind, stream begin and end,
// displacement, etype size, lb, extent, node count), then the nodes,
// children first: a run is {0, size}; a block list is {1, repeat, stride,
// count} and count blocks of {displacement, count, stride, child index}.
struct ChildIndex {
  std::size_t position;  // of the word
  std::int64_t node;     // the node whose block names the child
};

std::vector<ChildIndex> child_indices(const Words& words) {
  std::vector<ChildIndex> found;
  std::size_t at = 8;
  for (std::int64_t node = 0; node < words[7]; ++node) {
    if (words[at] == 0) {
      at += 2;
      continue;
    }
    const std::int64_t blocks = words[at + 3];
    at += 4;
    for (std::int64_t b = 0; b < blocks; ++b, at += 4) found.push_back({at + 3, node});
  }
  REQUIRE(at == words.size());
  return found;
}

std::shared_ptr<const FileView> vector_view(int count, int block, int stride,
                                            std::int64_t displacement) {
  MPI_Datatype vector;
  MPI_Type_vector(count, block, stride, MPI_BYTE, &vector);
  MPI_Type_commit(&vector);
  auto view = std::make_shared<const FileView>(displacement, MPI_BYTE, vector);
  MPI_Type_free(&vector);
  return view;
}

}  // namespace

// For random views and stream ranges, the decoded access has the view's
// parts and answers every query as the original does.
TEST_CASE("Exchange.AccessCodec.ViewRoundTrip") {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < flowio::testing::trials(300); ++trial) {
    const auto random = random_view(rng);
    CAPTURE(random.description);
    const auto [stream_begin, stream_end] = random_stream_range(rng, random.filetype_size, false);
    CAPTURE(stream_begin);
    CAPTURE(stream_end);
    const Access original(random.view, stream_begin, stream_end);
    const Words words = encode_view_access(original);
    // At most 4 words per distinct node and per block, and a header.
    const auto& filetype = random.view->filetype();
    CHECK(words.size() <= 8 + 4 * (filetype.node_count() + filetype.block_count()));
    const Access decoded = decode_access(words);
    REQUIRE(decoded.view() != nullptr);
    const FileView& view = *decoded.view();
    CHECK(decoded.stream_begin() == stream_begin);
    CHECK(view.displacement() == random.view->displacement());
    CHECK(view.etype_size() == random.view->etype_size());
    CHECK(view.filetype().lb() == random.view->filetype().lb());
    CHECK(view.filetype().extent() == random.view->filetype().extent());
    CHECK(view.filetype().size() == random.view->filetype().size());
    CHECK(decoded.estimated_pieces() == original.estimated_pieces());
    const auto truth = view_pieces(*random.view, stream_begin, stream_end);
    CHECK(check_access(original, truth, rng) == "");
    CHECK(check_access(decoded, truth, rng) == "");
  }
}

// A view of a million blocks encodes into a few words, and a range of
// 300000 of its pieces decodes to the same pieces.
TEST_CASE("Exchange.AccessCodec.ViewIsCompact") {
  const auto view = vector_view(1000000, 1, 2, 64);
  const Access original(view, 12345, 12345 + 300000);
  const Words words = encode_view_access(original);
  CHECK(words.size() < 40);
  const Access decoded = decode_access(words);
  CHECK(decoded.estimated_pieces() >= 300000);
  std::mt19937_64 rng(42);
  CHECK(check_access(decoded, view_pieces(*view, 12345, 12345 + 300000), rng) == "");
}

// A child shared by many blocks is written once.
TEST_CASE("Exchange.AccessCodec.SharedChildWrittenOnce") {
  MPI_Datatype child, parent;
  MPI_Type_vector(3, 2, 5, MPI_BYTE, &child);
  int lengths[50];
  MPI_Aint displacements[50];
  for (int i = 0; i < 50; ++i) {
    lengths[i] = 1;
    displacements[i] = 20 * i + (i * i) % 7;  // no arithmetic progression
  }
  MPI_Type_create_hindexed(50, lengths, displacements, child, &parent);
  MPI_Type_commit(&parent);
  const auto view = std::make_shared<const FileView>(0, MPI_BYTE, parent);
  MPI_Type_free(&parent);
  MPI_Type_free(&child);
  const Access original(view, 0, 6 * 50 * 2);
  const Words words = encode_view_access(original);
  CHECK(words.size() < 8 + 4 + 4 * 50 + 20);
  std::mt19937_64 rng(47);
  CHECK(check_access(decode_access(words), view_pieces(*view, 0, 6 * 50 * 2), rng) == "");
}

// Empty accesses travel as empty accesses.
TEST_CASE("Exchange.AccessCodec.Empty") {
  std::mt19937_64 rng(43);
  CHECK(check_access(decode_access(encode_view_access(Access())), {}, rng) == "");
  const auto view = vector_view(4, 1, 3, 0);
  CHECK(check_access(decode_access(encode_view_access(Access(view, 7, 7))), {}, rng) == "");
  const Access none = decode_access(encode_pieces({}));
  CHECK(none.empty());
  CHECK(none.pieces().empty());
  CHECK(check_access(none, {}, rng) == "");
}

// Piece lists, touching pieces included, come back as the same list.
TEST_CASE("Exchange.AccessCodec.PiecesRoundTrip") {
  std::mt19937_64 rng(44);
  for (int trial = 0; trial < flowio::testing::trials(300); ++trial) {
    std::vector<Piece> pieces;
    std::int64_t offset = static_cast<std::int64_t>(rng() % 100000);
    const int count = static_cast<int>(rng() % 50) + 1;
    for (int i = 0; i < count; ++i) {
      offset += rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 5000);
      const std::int64_t length = static_cast<std::int64_t>(rng() % 300) + 1;
      pieces.push_back(Piece{offset, length});
      offset += length;
    }
    const Words words = encode_pieces(pieces);
    CHECK(words.size() == 2 + 2 * pieces.size());
    const Access decoded = decode_access(words);
    CHECK(decoded.view() == nullptr);
    CHECK(std::vector<Piece>(decoded.pieces().begin(), decoded.pieces().end()) == pieces);
    CHECK(decoded.estimated_pieces() == count);
    CHECK(check_access(decoded, joined(pieces), rng) == "");
  }
}

// Every proper prefix of an encoding is refused.
TEST_CASE("Exchange.AccessCodec.TruncatedWords") {
  std::mt19937_64 rng(45);
  for (int trial = 0; trial < 40; ++trial) {
    const auto random = random_view(rng);
    CAPTURE(random.description);
    const Words view_words =
        encode_view_access(Access(random.view, 3, 3 + random.filetype_size * 2));
    const Words piece_words = encode_pieces(view_pieces(*random.view, 3, 3 + random.filetype_size));
    for (const Words* words : {&view_words, &piece_words}) {
      for (std::size_t length = 0; length < words->size(); ++length) {
        CAPTURE(length);
        CHECK_THROWS_AS(decode_access(std::span(words->data(), length)), flowio::MpiError);
      }
    }
  }
}

// A first word that names no kind of encoding is refused.
TEST_CASE("Exchange.AccessCodec.BadKind") {
  const auto view = vector_view(5, 2, 3, 10);
  for (Words words : {encode_view_access(Access(view, 0, 9)),
                      encode_pieces(std::vector<Piece>{{0, 4}, {8, 4}})}) {
    for (std::int64_t kind : {std::int64_t{3}, std::int64_t{-1}, std::int64_t{99},
                              std::numeric_limits<std::int64_t>::min()}) {
      CAPTURE(kind);
      words[0] = kind;
      CHECK_THROWS_AS(decode_access(words), flowio::MpiError);
    }
  }
}

// A block naming a child that is not an earlier node (negative, itself, a
// later node, past the end) is refused.
TEST_CASE("Exchange.AccessCodec.BadChildIndex") {
  std::mt19937_64 rng(46);
  int tried = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const auto random = random_view(rng);
    CAPTURE(random.description);
    const Words words = encode_view_access(Access(random.view, 0, random.filetype_size));
    for (const ChildIndex& child : child_indices(words)) {
      for (std::int64_t bad : {std::int64_t{-1}, child.node, child.node + 1, words[7],
                               std::numeric_limits<std::int64_t>::max()}) {
        CAPTURE(child.node);
        CAPTURE(bad);
        Words broken = words;
        broken[child.position] = bad;
        CHECK_THROWS_AS(decode_access(broken), flowio::MpiError);
        ++tried;
      }
    }
  }
  CHECK(tried > 100);
}

// Counts no encoder writes (negative, or a view without nodes) are
// refused, as is a node kind that is neither a run nor a block list.
TEST_CASE("Exchange.AccessCodec.BadCounts") {
  // Piece list with count -1.
  CHECK_THROWS_AS(decode_access(Words{2, -1}), flowio::MpiError);
  // View whose node count is 0 or -1.
  CHECK_THROWS_AS(decode_access(Words{1, 0, 4, 0, 1, 0, 4, 0}), flowio::MpiError);
  CHECK_THROWS_AS(decode_access(Words{1, 0, 4, 0, 1, 0, 4, -1, 0, 4}), flowio::MpiError);
  // A run of 4 bytes, then a block list with -1 blocks.
  CHECK_THROWS_AS(decode_access(Words{1, 0, 4, 0, 1, 0, 8, 2, 0, 4, 1, 1, 0, -1}),
                  flowio::MpiError);
  // A block list with a block of -1 copies of the run.
  CHECK_THROWS_AS(decode_access(Words{1, 0, 4, 0, 1, 0, 8, 2, 0, 4, 1, 1, 0, 1, 0, -1, 0, 0}),
                  flowio::MpiError);
  // Node kind 5, otherwise laid out as a block list of one block.
  CHECK_THROWS_AS(decode_access(Words{1, 0, 4, 0, 1, 0, 8, 2, 0, 4, 5, 1, 0, 1, 0, 1, 0, 0}),
                  flowio::MpiError);
  // The same words with kind 1 are an encoding: the check above is about
  // the kind alone.
  CHECK_NOTHROW(decode_access(Words{1, 0, 4, 0, 1, 0, 8, 2, 0, 4, 1, 1, 0, 1, 0, 1, 0, 0}));
}
