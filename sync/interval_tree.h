// IntervalTree: a static, balanced centered interval tree over half-open
// byte ranges [begin, end), answering "which intervals overlap [a, b)" in
// O(log n + r) for r answers, as the object-set paper (Logan and Dickens)
// describes: each node holds a position on the file's integer line and
// every interval containing it; the intervals wholly below go to the left
// subtree, those wholly above to the right.
//
// Balance: a node's position is the median of the endpoints of the
// intervals it is built from, so each subtree gets at most half of them and
// the depth is at most log2(n) + 1. The position is itself an endpoint, so
// every node holds at least one interval: a query visits the nodes on two
// root-to-leaf paths plus nodes that each report an answer. Disjoint
// intervals (an object set's) are built in O(n): the median interval is
// the node, each half a subtree.
//
// The intervals may overlap (the tree is general), but the object sets that
// use it hold disjoint ones; for disjoint intervals the answers come in
// file order (the query walks the tree in order, and a node then holds one
// interval).
//
// Memory: the intervals (16 bytes each), two id lists (8 bytes per
// interval) and at most one 24-byte node per interval; no pointers.
// Immutable once built; const queries may run on any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace flowio::sync {

// A half-open range of file offsets; empty when end <= begin.
struct Interval {
  std::int64_t begin = 0;
  std::int64_t end = 0;

  friend bool operator==(const Interval&, const Interval&) = default;
};

class IntervalTree {
 public:
  using Id = std::uint32_t;

  // An empty tree.
  IntervalTree() = default;
  // Builds the tree in O(n log n). Interval k gets id k. Empty intervals
  // are kept (interval() returns them) but never overlap anything. Throws
  // std::length_error for more than 2^32 - 1 intervals.
  explicit IntervalTree(std::vector<Interval> intervals);

  std::size_t size() const { return intervals_.size(); }
  const Interval& interval(Id id) const { return intervals_[id]; }

  // Calls visit(Id) for every interval that shares at least one byte with
  // [begin, end), each once; stops early when visit returns false. Returns
  // false when it stopped early. Nothing overlaps an empty range.
  template <typename Visit>
  bool for_each_overlapping(std::int64_t begin, std::int64_t end, Visit&& visit) const;

  // The ids for_each_overlapping visits, in its order.
  std::vector<Id> overlapping(std::int64_t begin, std::int64_t end) const;

  // Levels of the deepest path (0 for an empty tree).
  int depth() const { return depth_; }
  // Bytes the tree holds (its intervals, id lists and nodes), for
  // benchmarks and the object set's own accounting.
  std::size_t memory_bytes() const;

 private:
  static constexpr Id kNone = 0xffffffffu;

  struct Node {
    // Every interval of the node contains this byte.
    std::int64_t center = 0;
    Id left = kNone;
    Id right = kNone;
    // The node's intervals are by_begin_[first, first + count), sorted by
    // begin ascending, and by_end_[first, first + count), by end descending.
    Id first = 0;
    Id count = 0;
  };

  Id build(std::vector<Id>& ids, int level);
  Id build_disjoint(const std::vector<Id>& ids, std::size_t low, std::size_t high, int level);
  template <typename Visit>
  bool visit_node(Id node, std::int64_t begin, std::int64_t end, Visit& visit) const;

  std::vector<Interval> intervals_;
  std::vector<Node> nodes_;
  std::vector<Id> by_begin_;
  std::vector<Id> by_end_;
  Id root_ = kNone;
  int depth_ = 0;
};

template <typename Visit>
bool IntervalTree::for_each_overlapping(std::int64_t begin, std::int64_t end, Visit&& visit) const {
  if (end <= begin || root_ == kNone) return true;
  return visit_node(root_, begin, end, visit);
}

// In order: left subtree, the node, right subtree. The last byte of the
// query is end - 1; a node whose center lies in [begin, end - 1] reports
// all its intervals (each contains the center, so each overlaps) and both
// subtrees may hold answers. Otherwise only one side can, and the node's
// sorted lists stop the scan at the first interval that misses.
template <typename Visit>
bool IntervalTree::visit_node(Id node_id, std::int64_t begin, std::int64_t end,
                              Visit& visit) const {
  const Node& node = nodes_[node_id];
  const std::int64_t last = end - 1;
  if (last < node.center) {
    if (node.left != kNone && !visit_node(node.left, begin, end, visit)) return false;
    for (Id k = node.first; k < node.first + node.count; ++k) {
      const Id id = by_begin_[k];
      if (intervals_[id].begin > last) break;
      if (!visit(id)) return false;
    }
    return true;
  }
  if (begin > node.center) {
    // by_end_ is sorted by end descending: the answers are a prefix, but
    // in-order output wants them by begin. For disjoint intervals a node
    // holds one; for overlapping ones the order is unspecified anyway.
    for (Id k = node.first; k < node.first + node.count; ++k) {
      const Id id = by_end_[k];
      if (intervals_[id].end <= begin) break;
      if (!visit(id)) return false;
    }
    return node.right == kNone || visit_node(node.right, begin, end, visit);
  }
  if (node.left != kNone && !visit_node(node.left, begin, end, visit)) return false;
  for (Id k = node.first; k < node.first + node.count; ++k) {
    if (!visit(by_begin_[k])) return false;
  }
  return node.right == kNone || visit_node(node.right, begin, end, visit);
}

}  // namespace flowio::sync
