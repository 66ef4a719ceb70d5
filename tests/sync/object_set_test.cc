// ObjectSet: the objects built from random views (random nested datatypes,
// stream ranges, explicit piece lists) agree with a byte-by-byte
// computation of which processes cover each byte; touches_shared and
// shared_objects_of agree with the same model.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/access.h"
#include "sync/object_set.h"
#include "tests/core/access_checks.h"

namespace {

using namespace flowio::core;
using namespace flowio::core::testing;
using flowio::sync::Interval;
using flowio::sync::ObjectSet;

// The model: for each byte of [begin, end), the ranks covering it, as a
// bit mask (the tests use at most 6 processes).
struct ByteModel {
  std::int64_t begin = 0;
  std::vector<std::uint32_t> covering;

  ByteModel(const std::vector<std::vector<Piece>>& pieces, std::int64_t range_begin,
            std::int64_t range_end)
      : begin(range_begin), covering(static_cast<std::size_t>(range_end - range_begin), 0) {
    for (std::size_t rank = 0; rank < pieces.size(); ++rank) {
      for (const Piece& piece : pieces[rank]) {
        for (std::int64_t x = std::max(piece.offset, range_begin);
             x < std::min(piece.offset + piece.length, range_end); ++x) {
          covering[static_cast<std::size_t>(x - range_begin)] |= 1u << rank;
        }
      }
    }
  }

  // Maximal runs of bytes with the same nonempty set, as "[b,e){r r}".
  std::string objects() const {
    std::string text;
    std::size_t i = 0;
    while (i < covering.size()) {
      if (covering[i] == 0) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < covering.size() && covering[j] == covering[i]) ++j;
      std::vector<int> ranks;
      for (int rank = 0; rank < 32; ++rank) {
        if ((covering[i] >> rank) & 1u) ranks.push_back(rank);
      }
      text += object_text(begin + static_cast<std::int64_t>(i),
                          begin + static_cast<std::int64_t>(j), ranks);
      i = j;
    }
    return text;
  }

  bool shared_within(std::int64_t from, std::int64_t to) const {
    for (std::int64_t x = from; x < to; ++x) {
      if (x < begin || x >= begin + static_cast<std::int64_t>(covering.size())) return true;
      if (std::popcount(covering[static_cast<std::size_t>(x - begin)]) > 1) return true;
    }
    return false;
  }

  static std::string object_text(std::int64_t b, std::int64_t e, const std::vector<int>& ranks) {
    std::string text = "[" + std::to_string(b) + "," + std::to_string(e) + "){";
    for (const int rank : ranks) text += " " + std::to_string(rank);
    return text + " }";
  }
};

std::string objects_of(const ObjectSet& set) {
  std::string text;
  for (ObjectSet::ObjectId id = 0; id < set.object_count(); ++id) {
    const auto ranks = set.ranks(id);
    text += ByteModel::object_text(set.object(id).begin, set.object(id).end,
                                   std::vector<int>(ranks.begin(), ranks.end()));
  }
  return text;
}

// One random process: a random view over a random stream range, given as
// the view (compact) or as its explicit pieces, or nothing at all.
struct RandomProcess {
  Access access;
  std::vector<Piece> pieces;
  std::string description;
};

RandomProcess random_process(std::mt19937_64& rng) {
  RandomProcess out;
  if (rng() % 8 == 0) {
    out.description = "empty";
    return out;
  }
  const auto view = random_view(rng, 600);
  const std::int64_t stream_begin = static_cast<std::int64_t>(rng() % (2 * view.filetype_size));
  const std::int64_t stream_end =
      stream_begin + static_cast<std::int64_t>(rng() % (3 * view.filetype_size + 1));
  out.pieces = view_pieces(*view.view, stream_begin, stream_end);
  out.access = rng() % 4 == 0 ? Access(out.pieces) : Access(view.view, stream_begin, stream_end);
  out.description = view.description + " stream [" + std::to_string(stream_begin) + ", " +
                    std::to_string(stream_end) + ")" + (out.access.view() ? "" : " as a list");
  return out;
}

}  // namespace

// The paper's tile-reader pattern by hand: four 3 x 3 tiles of a 5 x 5
// byte image, overlapping in column 2 and row 2; the center byte is shared
// by all four readers.
TEST_CASE("Sync.ObjectSet.TilesByHand") {
  // Tile (ty, tx) covers rows 2ty..2ty+2 and columns 2tx..2tx+2.
  std::vector<Access> tiles;
  for (int ty = 0; ty < 2; ++ty) {
    for (int tx = 0; tx < 2; ++tx) {
      std::vector<Piece> rows;
      for (int row = 2 * ty; row < 2 * ty + 3; ++row) rows.push_back({row * 5 + 2 * tx, 3});
      tiles.emplace_back(rows);
    }
  }
  const ObjectSet set(tiles, 0, 25);
  const std::vector<ObjectSet::ObjectId> row2 = set.overlapping(10, 15);
  REQUIRE(row2.size() == 3);
  CHECK(set.object(row2[1]) == Interval{12, 13});
  CHECK(set.ranks(row2[1]).size() == 4);
  CHECK(set.touches_shared(12, 13));
  CHECK_FALSE(set.touches_shared(0, 2));
  CHECK(set.touches_shared(1, 3));    // byte 2: tiles 0 and 1
  CHECK(set.touches_shared(24, 26));  // byte 25 lies outside the range
  // Column 2 of rows 0 and 1, then row 2's columns 0-1 and 2.
  CHECK(set.shared_objects_of(0).size() == 4);
  CHECK(set.rank_set_count() == 9);
}

// Random sets of 1 to 6 processes with random views: the objects equal the
// maximal runs of bytes with the same covering set, byte by byte, over a
// random range; touches_shared and shared_objects_of agree with the model.
TEST_CASE("Sync.ObjectSet.RandomViewsAgainstBytes") {
  std::mt19937_64 rng(1414);
  for (int round = 0; round < 150; ++round) {
    const int processes = 1 + static_cast<int>(rng() % 6);
    std::vector<RandomProcess> group;
    std::vector<Access> accesses;
    std::vector<std::vector<Piece>> pieces;
    std::int64_t extent = 1;
    for (int rank = 0; rank < processes; ++rank) {
      group.push_back(random_process(rng));
      accesses.push_back(group.back().access);
      pieces.push_back(group.back().pieces);
      extent = std::max(extent, group.back().access.file_end());
    }
    std::int64_t range_begin = static_cast<std::int64_t>(rng() % (extent / 2 + 1));
    std::int64_t range_end = range_begin + static_cast<std::int64_t>(rng() % (extent + 20));
    if (round % 5 == 0) range_begin = 0, range_end = extent + 7;
    std::string context = "round " + std::to_string(round) + " range [" +
                          std::to_string(range_begin) + ", " + std::to_string(range_end) + ")";
    for (int rank = 0; rank < processes; ++rank) {
      context += "\n  rank " + std::to_string(rank) + ": " +
                 group[static_cast<std::size_t>(rank)].description;
    }
    INFO(context);

    const ObjectSet set(accesses, range_begin, range_end);
    const ByteModel model(pieces, range_begin, range_end);
    REQUIRE(objects_of(set) == model.objects());

    for (int query = 0; query < 30; ++query) {
      const std::int64_t from =
          range_begin + static_cast<std::int64_t>(rng() % (range_end - range_begin + 3)) - 2;
      const std::int64_t to = from + static_cast<std::int64_t>(rng() % 40);
      INFO("touches_shared(" << from << ", " << to << ")");
      CHECK(set.touches_shared(from, to) == model.shared_within(from, to));
    }
    // Each process's own access (what the lock path asks about), whole
    // and as random sub-ranges of its pieces.
    for (int rank = 0; rank < processes; ++rank) {
      const std::vector<Piece>& own = pieces[static_cast<std::size_t>(rank)];
      bool expected = false;
      for (const Piece& piece : own) {
        expected = expected || model.shared_within(piece.offset, piece.offset + piece.length);
      }
      INFO("touches_shared(access of rank " << rank << ")");
      CHECK(set.touches_shared(accesses[static_cast<std::size_t>(rank)]) == expected);
      if (own.size() > 2) {
        const std::vector<Piece> middle(own.begin() + 1, own.end() - 1);
        bool middle_expected = false;
        for (const Piece& piece : middle) {
          middle_expected =
              middle_expected || model.shared_within(piece.offset, piece.offset + piece.length);
        }
        CHECK(set.touches_shared(Access(middle)) == middle_expected);
      }

      std::string shared_expected, shared_got;
      for (ObjectSet::ObjectId id = 0; id < set.object_count(); ++id) {
        const auto ranks = set.ranks(id);
        if (ranks.size() > 1 && std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
          shared_expected += std::to_string(id) + " ";
        }
      }
      for (const ObjectSet::ObjectId id : set.shared_objects_of(rank)) {
        shared_got += std::to_string(id) + " ";
      }
      CHECK(shared_got == shared_expected);
    }
  }
}

// A bad range is refused at construction.
TEST_CASE("Sync.ObjectSet.BadRange") {
  std::vector<Access> none;
  CHECK_THROWS_AS(ObjectSet(none, 10, 5), flowio::UsageError);
  CHECK_THROWS_AS(ObjectSet(none, -1, 5), flowio::UsageError);
  CHECK(ObjectSet(none, 5, 5).object_count() == 0);
}

// Whole views (of_views): past the built range the coverage of every byte
// repeats with the period (checked byte by byte over three more periods),
// and touches_shared of ranges anywhere, folded through the period, agrees
// with the byte model; a period over the piece budget falls back to a
// bounded set that is conservative past its end.
TEST_CASE("Sync.ObjectSet.WholeViewsRepeat") {
  std::mt19937_64 rng(2024);
  int periodic_rounds = 0;
  for (int round = 0; round < 80; ++round) {
    const int processes = 1 + static_cast<int>(rng() % 4);
    std::vector<std::shared_ptr<const flowio::core::FileView>> views;
    std::string context = "round " + std::to_string(round);
    for (int rank = 0; rank < processes; ++rank) {
      const auto view = random_view(rng, 160);
      views.push_back(view.view);
      context += "\n  rank " + std::to_string(rank) + ": " + view.description;
    }
    INFO(context);
    const ObjectSet set = ObjectSet::of_views(views, 20000);
    // A period over the budget is the fallback case below; a long one
    // would make the byte model slow.
    const std::int64_t limit = set.range_end() + 3 * set.period() + 64;
    if (set.period() == 0 || limit > 200000) continue;
    ++periodic_rounds;
    std::vector<std::vector<Piece>> pieces;
    for (const auto& view : views) {
      pieces.push_back(view_pieces(*view, 0, view->stream_bytes_before(limit)));
    }
    const ByteModel model(pieces, 0, limit);
    const std::int64_t start = set.range_end() - set.period();
    for (std::int64_t x = set.range_end(); x < limit; ++x) {
      const std::int64_t folded = start + (x - start) % set.period();
      if (model.covering[static_cast<std::size_t>(x)] !=
          model.covering[static_cast<std::size_t>(folded)]) {
        FAIL("byte " << x << " differs from its folded byte " << folded);
      }
    }
    for (int query = 0; query < 200; ++query) {
      const std::int64_t from =
          static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(limit));
      const std::int64_t to =
          std::min(limit, from + static_cast<std::int64_t>(
                                     rng() % static_cast<std::uint64_t>(
                                                 std::min<std::int64_t>(set.period() + 40, 3000))));
      INFO("touches_shared(" << from << ", " << to << ") period " << set.period());
      CHECK(set.touches_shared(from, to) == model.shared_within(from, to));
    }
    // Each process's access far past the range, through the pieces.
    for (std::size_t rank = 0; rank < views.size(); ++rank) {
      const auto& view = views[rank];
      if (view->filetype().size() == 0) continue;
      const std::int64_t first = view->stream_bytes_before(set.range_end() + set.period());
      const std::int64_t last = view->stream_bytes_before(limit);
      const Access access(view, first, last);
      bool expected = false;
      access.for_each_piece(0, limit, [&](const Piece& piece) {
        expected = expected || model.shared_within(piece.offset, piece.offset + piece.length);
      });
      CHECK(set.touches_shared(access) == expected);
    }
  }
  CHECK(periodic_rounds > 30);

  // Coprime extents 1009 and 1013 and a budget of 100 pieces: no period.
  MPI_Datatype a, b;
  MPI_Type_create_resized(MPI_INT, 0, 1009, &a);
  MPI_Type_create_resized(MPI_INT, 0, 1013, &b);
  MPI_Type_commit(&a);
  MPI_Type_commit(&b);
  const std::vector<std::shared_ptr<const flowio::core::FileView>> coprime = {
      std::make_shared<const flowio::core::FileView>(0, MPI_BYTE, a),
      std::make_shared<const flowio::core::FileView>(2, MPI_BYTE, b)};
  MPI_Type_free(&a);
  MPI_Type_free(&b);
  const ObjectSet bounded = ObjectSet::of_views(coprime, 100);
  CHECK(bounded.period() == 0);
  CHECK(bounded.range_end() > 0);
  CHECK(bounded.touches_shared(0, 2) == false);
  CHECK(bounded.touches_shared(2, 4) == true);
  CHECK(bounded.touches_shared(bounded.range_end(), bounded.range_end() + 1) == true);
  const ObjectSet periodic = ObjectSet::of_views(coprime, 1 << 22);
  CHECK(periodic.period() == 1009 * 1013);
}
