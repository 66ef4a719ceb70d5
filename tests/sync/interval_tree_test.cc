// IntervalTree: overlap queries agree with a scan of every interval, for
// overlapping and disjoint sets; disjoint answers come in file order; the
// tree stays balanced.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sync/interval_tree.h"

namespace {

using flowio::sync::Interval;
using flowio::sync::IntervalTree;

std::vector<IntervalTree::Id> scan(const std::vector<Interval>& intervals, std::int64_t begin,
                                   std::int64_t end) {
  std::vector<IntervalTree::Id> out;
  for (IntervalTree::Id id = 0; id < intervals.size(); ++id) {
    const Interval& x = intervals[id];
    if (begin < end && x.begin < x.end && x.begin < end && begin < x.end) out.push_back(id);
  }
  return out;
}

std::string describe(const std::vector<IntervalTree::Id>& ids) {
  std::string text;
  for (const IntervalTree::Id id : ids) text += " " + std::to_string(id);
  return text;
}

}  // namespace

// The tile-reader objects of the paper's Figure 5 (nine 20-byte objects,
// one pair overlapping): a search for the tile-writer row [0, 60) finds
// objects 0, 1 and 2, as the paper's translator does.
TEST_CASE("Sync.IntervalTree.PaperTileReader") {
  const std::vector<Interval> objects = {{0, 20},    {20, 40},   {40, 60},   {60, 80},  {80, 100},
                                         {100, 120}, {120, 140}, {140, 160}, {150, 170}};
  const IntervalTree tree(objects);
  std::vector<IntervalTree::Id> found = tree.overlapping(0, 60);
  std::sort(found.begin(), found.end());
  CHECK(found == std::vector<IntervalTree::Id>{0, 1, 2});
  found = tree.overlapping(155, 156);
  std::sort(found.begin(), found.end());
  CHECK(found == std::vector<IntervalTree::Id>{7, 8});
  CHECK(tree.overlapping(170, 200).empty());
  CHECK(tree.overlapping(30, 30).empty());
}

// Random intervals, some overlapping, some empty, some sharing endpoints:
// every query returns exactly the intervals a scan finds, each once.
TEST_CASE("Sync.IntervalTree.RandomOverlapping") {
  std::mt19937_64 rng(14);
  for (int round = 0; round < 100; ++round) {
    const int n = static_cast<int>(rng() % 300);
    const std::int64_t span = 1 + static_cast<std::int64_t>(rng() % 2000);
    std::vector<Interval> intervals;
    for (int i = 0; i < n; ++i) {
      const std::int64_t begin = static_cast<std::int64_t>(rng() % span);
      const std::int64_t length = static_cast<std::int64_t>(rng() % 100) - 5;  // a few empty
      intervals.push_back({begin, begin + length});
    }
    const IntervalTree tree(intervals);
    REQUIRE(tree.size() == intervals.size());
    for (int query = 0; query < 50; ++query) {
      std::int64_t begin = static_cast<std::int64_t>(rng() % (span + 200)) - 100;
      std::int64_t end = begin + static_cast<std::int64_t>(rng() % 300);
      std::vector<IntervalTree::Id> got = tree.overlapping(begin, end);
      std::sort(got.begin(), got.end());
      const std::vector<IntervalTree::Id> expected = scan(intervals, begin, end);
      INFO("round " << round << " query [" << begin << ", " << end << ")");
      CHECK(describe(got) == describe(expected));
    }
  }
}

// Disjoint intervals (what object sets hold): answers in file order, an
// early stop visits no more, and the depth stays within log2(n) + 1.
TEST_CASE("Sync.IntervalTree.DisjointInOrder") {
  std::mt19937_64 rng(41);
  for (const int n : {1, 2, 3, 7, 100, 5000}) {
    std::vector<Interval> intervals;
    std::int64_t at = 0;
    for (int i = 0; i < n; ++i) {
      at += static_cast<std::int64_t>(rng() % 4);  // gaps of 0..3 bytes
      const std::int64_t length = 1 + static_cast<std::int64_t>(rng() % 9);
      intervals.push_back({at, at + length});
      at += length;
    }
    std::shuffle(intervals.begin(), intervals.end(), rng);
    const IntervalTree tree(intervals);
    CHECK(tree.depth() <= static_cast<int>(std::floor(std::log2(n))) + 1);
    for (int query = 0; query < 200; ++query) {
      const std::int64_t begin = static_cast<std::int64_t>(rng() % (at + 10)) - 5;
      const std::int64_t end = begin + static_cast<std::int64_t>(rng() % 60);
      const std::vector<IntervalTree::Id> got = tree.overlapping(begin, end);
      INFO("n " << n << " query [" << begin << ", " << end << ")");
      for (std::size_t i = 1; i < got.size(); ++i) {
        CHECK(tree.interval(got[i - 1]).end <= tree.interval(got[i]).begin);
      }
      std::vector<IntervalTree::Id> sorted = got;
      std::sort(sorted.begin(), sorted.end());
      CHECK(describe(sorted) == describe(scan(intervals, begin, end)));
      if (got.size() >= 2) {
        std::vector<IntervalTree::Id> first_two;
        const bool finished = tree.for_each_overlapping(begin, end, [&](IntervalTree::Id id) {
          first_two.push_back(id);
          return first_two.size() < 2;
        });
        CHECK_FALSE(finished);
        CHECK(first_two == std::vector<IntervalTree::Id>{got[0], got[1]});
      }
    }
  }
}

// An empty tree answers nothing; a tree of empty intervals holds them but
// finds none.
TEST_CASE("Sync.IntervalTree.Empty") {
  CHECK(IntervalTree().overlapping(0, 100).empty());
  const IntervalTree tree(std::vector<Interval>{{5, 5}, {9, 3}});
  CHECK(tree.size() == 2);
  CHECK(tree.interval(1) == Interval{9, 3});
  CHECK(tree.overlapping(0, 100).empty());
  CHECK(tree.depth() == 0);
}
