// flowio::ObjectSet::gather on 1, 2 and 4 ranks: every rank builds the same
// objects, equal to the maximal runs of bytes with the same covering set
// computed from every rank's explicit pieces; shared_with_others and
// touches_shared agree; a bad view on one rank fails every rank.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "flowio/object_set.h"
#include "runtime/core/file_view.h"
#include "tests/core/access_checks.h"
#include "tests/support/world.h"

namespace {

using flowio::FileObject;
using flowio::core::Piece;
using flowio::core::testing::accepted_filetype;
using flowio::testing::world_rank;
using flowio::testing::world_size;

// Every rank's pieces inside [begin, end), gathered.
std::vector<std::vector<Piece>> all_pieces(const std::vector<Piece>& mine) {
  std::vector<std::int64_t> flat;
  for (const Piece& piece : mine) flat.insert(flat.end(), {piece.offset, piece.length});
  const int count = static_cast<int>(flat.size());
  std::vector<int> counts(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> displacements(counts.size());
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displacements[r] = total;
    total += counts[r];
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(flat.data(), count, MPI_INT64_T, all.data(), counts.data(), displacements.data(),
                 MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<std::vector<Piece>> out(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) {
    for (int k = 0; k < counts[r]; k += 2) {
      out[r].push_back(Piece{all[static_cast<std::size_t>(displacements[r] + k)],
                             all[static_cast<std::size_t>(displacements[r] + k + 1)]});
    }
  }
  return out;
}

// Rounds per test case: FLOWIO_OBJECT_ROUNDS, default `fallback` (each
// round is a handful of collectives, slow when 4 ranks share 2 cores).
int rounds(int fallback) {
  const char* text = std::getenv("FLOWIO_OBJECT_ROUNDS");
  return text != nullptr ? std::atoi(text) : fallback;
}

// The model's objects: maximal runs of bytes with the same nonempty set
// (ranks as bits of a mask: these tests run on at most 4 ranks).
std::vector<FileObject> model_objects(const std::vector<std::vector<Piece>>& pieces,
                                      std::int64_t begin, std::int64_t end) {
  std::vector<std::uint32_t> covering(static_cast<std::size_t>(end - begin), 0);
  for (std::size_t r = 0; r < pieces.size(); ++r) {
    for (const Piece& piece : pieces[r]) {
      for (std::int64_t x = std::max(piece.offset, begin);
           x < std::min(piece.offset + piece.length, end); ++x) {
        covering[static_cast<std::size_t>(x - begin)] |= 1u << r;
      }
    }
  }
  std::vector<FileObject> objects;
  for (std::size_t i = 0; i < covering.size();) {
    std::size_t j = i + 1;
    while (j < covering.size() && covering[j] == covering[i]) ++j;
    if (covering[i] != 0) {
      std::vector<int> ranks;
      for (int r = 0; r < 32; ++r) {
        if ((covering[i] >> r) & 1u) ranks.push_back(r);
      }
      objects.push_back(FileObject{begin + static_cast<std::int64_t>(i),
                                   begin + static_cast<std::int64_t>(j), ranks});
    }
    i = j;
  }
  return objects;
}

}  // namespace

// Random views on every rank, random shared ranges: the gathered set equals
// the model on every rank.
TEST_CASE("Sync.ObjectSetGather.RandomViews") {
  std::mt19937_64 shared_rng(99);
  for (int round = 0; round < rounds(25); ++round) {
    std::mt19937_64 own(1000 * static_cast<std::uint64_t>(round) +
                        static_cast<std::uint64_t>(world_rank()));
    std::string text;
    MPI_Datatype filetype = accepted_filetype(own, 400, text);
    const MPI_Offset displacement = static_cast<MPI_Offset>(own() % 200);
    const std::int64_t begin = static_cast<std::int64_t>(shared_rng() % 300);
    const std::int64_t end = begin + static_cast<std::int64_t>(shared_rng() % 3000);
    INFO("round " << round << " rank " << world_rank() << ": " << text << " displacement "
                  << displacement << " range [" << begin << ", " << end << ")");
    const flowio::ObjectSet objects =
        flowio::ObjectSet::gather(MPI_COMM_WORLD, displacement, MPI_BYTE, filetype, begin, end);
    const flowio::core::FileView view(displacement, MPI_BYTE, filetype);
    MPI_Type_free(&filetype);
    const std::vector<Piece> mine = flowio::core::testing::view_pieces(
        view, view.stream_bytes_before(begin), view.stream_bytes_before(end));
    const std::vector<FileObject> expected = model_objects(all_pieces(mine), begin, end);

    REQUIRE(objects.size() == expected.size());
    std::size_t shared = 0;
    for (std::size_t k = 0; k < expected.size(); ++k) {
      CHECK(objects.object(k) == expected[k]);
      if (expected[k].shared()) ++shared;
    }
    CHECK(objects.shared_count() == shared);
    std::vector<FileObject> mine_shared;
    for (const FileObject& object : expected) {
      if (object.shared() &&
          std::find(object.ranks.begin(), object.ranks.end(), world_rank()) != object.ranks.end()) {
        mine_shared.push_back(object);
      }
    }
    CHECK(objects.shared_with_others(world_rank()) == mine_shared);
    for (const Piece& piece : mine) {
      bool expected_shared = false;
      for (const FileObject& object : expected) {
        expected_shared =
            expected_shared || (object.shared() && object.begin < piece.offset + piece.length &&
                                piece.offset < object.end);
      }
      CHECK(objects.touches_shared(piece.offset, piece.offset + piece.length) == expected_shared);
    }
  }
}

// A filetype whose displacements decrease, given by rank 0 only, and
// ranges that differ: every rank throws UsageError, none is left waiting.
TEST_CASE("Sync.ObjectSetGather.BadViewOnOneRank") {
  MPI_Datatype filetype = MPI_BYTE;
  if (world_rank() == 0) {
    const int lengths[2] = {1, 1};
    const int displacements[2] = {8, 0};
    MPI_Type_indexed(2, lengths, displacements, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
  }
  CHECK_THROWS_AS(flowio::ObjectSet::gather(MPI_COMM_WORLD, 0, MPI_BYTE, filetype, 0, 100),
                  flowio::UsageError);
  // Ranges that differ between ranks (only possible with two or more).
  if (world_size() > 1) {
    CHECK_THROWS_AS(
        flowio::ObjectSet::gather(MPI_COMM_WORLD, 0, MPI_BYTE, MPI_BYTE, world_rank(), 100),
        flowio::UsageError);
  }
  if (world_rank() == 0) MPI_Type_free(&filetype);
}

// Whole views: the objects up to end() are those of the range form over
// [0, end()), and touches_shared past end() agrees with a model of every
// rank's pieces over two more periods.
TEST_CASE("Sync.ObjectSetGather.WholeViews") {
  int folded_rounds = 0;
  for (int round = 0; round < rounds(10); ++round) {
    std::mt19937_64 own(5000 + 1000 * static_cast<std::uint64_t>(round) +
                        static_cast<std::uint64_t>(world_rank()));
    std::string text;
    MPI_Datatype filetype = accepted_filetype(own, 400, text);
    const MPI_Offset displacement = static_cast<MPI_Offset>(own() % 200);
    INFO("round " << round << " rank " << world_rank() << ": " << text << " displacement "
                  << displacement);
    // A small piece budget: views whose period would be long fall back,
    // and the round is skipped below (the unit tests cover that case).
    const flowio::ObjectSet whole =
        flowio::ObjectSet::gather(MPI_COMM_WORLD, displacement, MPI_BYTE, filetype, 20000);
    const flowio::ObjectSet ranged =
        flowio::ObjectSet::gather(MPI_COMM_WORLD, displacement, MPI_BYTE, filetype, 0, whole.end());
    const flowio::core::FileView view(displacement, MPI_BYTE, filetype);
    MPI_Type_free(&filetype);
    REQUIRE(whole.size() == ranged.size());
    for (std::size_t k = 0; k < whole.size(); ++k) CHECK(whole.object(k) == ranged.object(k));
    if (whole.period() == 0 || whole.end() + 2 * whole.period() > 60000) continue;
    ++folded_rounds;
    const std::int64_t limit = whole.end() + 2 * whole.period();
    const std::vector<Piece> mine = flowio::core::testing::view_pieces(
        view, 0, view.filetype().size() > 0 ? view.stream_bytes_before(limit) : 0);
    const std::vector<FileObject> model = model_objects(all_pieces(mine), 0, limit);
    std::mt19937_64 shared_rng(static_cast<std::uint64_t>(round));  // the same on every rank
    for (int query = 0; query < 100; ++query) {
      const std::int64_t from =
          whole.end() +
          static_cast<std::int64_t>(shared_rng() % static_cast<std::uint64_t>(whole.period()));
      const std::int64_t to =
          std::min(limit, from + 1 + static_cast<std::int64_t>(shared_rng() % 64));
      bool expected = false;
      for (const FileObject& object : model) {
        expected = expected || (object.shared() && object.begin < to && from < object.end);
      }
      CHECK(whole.touches_shared(from, to) == expected);
    }
  }
  CHECK(folded_rounds >= rounds(10) / 3);
}
