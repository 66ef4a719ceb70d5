#include "sync/interval_tree.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace flowio::sync {

IntervalTree::IntervalTree(std::vector<Interval> intervals) : intervals_(std::move(intervals)) {
  // Callers grow the vector by appending: give back the slack, which
  // would otherwise be up to half of the tree's memory.
  intervals_.shrink_to_fit();
  if (intervals_.size() >= kNone) {
    throw std::length_error("IntervalTree: more than 2^32 - 1 intervals");
  }
  std::vector<Id> ids;
  ids.reserve(intervals_.size());
  for (Id id = 0; id < intervals_.size(); ++id) {
    if (intervals_[id].begin < intervals_[id].end) ids.push_back(id);
  }
  // Sorted by begin once here; build() keeps each part in that order, so a
  // node's by_begin_ list needs no sort of its own. Object sets come
  // sorted already.
  const auto by_begin = [this](Id a, Id b) { return intervals_[a].begin < intervals_[b].begin; };
  if (!std::is_sorted(ids.begin(), ids.end(), by_begin)) {
    std::stable_sort(ids.begin(), ids.end(), by_begin);
  }
  by_begin_.reserve(ids.size());
  by_end_.reserve(ids.size());
  const bool disjoint = std::adjacent_find(ids.begin(), ids.end(), [this](Id a, Id b) {
                          return intervals_[a].end > intervals_[b].begin;
                        }) == ids.end();
  if (disjoint) {
    nodes_.reserve(ids.size());
    root_ = build_disjoint(ids, 0, ids.size(), 1);
  } else {
    root_ = build(ids, 1);
  }
}

// Disjoint intervals sorted by begin: the middle one is the node, its begin
// the center (it alone contains it), and the halves on either side are the
// subtrees, wholly below and wholly above. The general build would find the
// same tree; this one allocates nothing and runs in O(n).
IntervalTree::Id IntervalTree::build_disjoint(const std::vector<Id>& ids, std::size_t low,
                                              std::size_t high, int level) {
  if (low == high) return kNone;
  depth_ = std::max(depth_, level);
  const std::size_t middle = low + (high - low) / 2;
  const Id id = ids[middle];
  const Id node = static_cast<Id>(nodes_.size());
  nodes_.push_back(Node{intervals_[id].begin, kNone, kNone, static_cast<Id>(by_begin_.size()), 1});
  by_begin_.push_back(id);
  by_end_.push_back(id);
  const Id left = build_disjoint(ids, low, middle, level + 1);
  const Id right = build_disjoint(ids, middle + 1, high, level + 1);
  nodes_[node].left = left;
  nodes_[node].right = right;
  return node;
}

IntervalTree::Id IntervalTree::build(std::vector<Id>& ids, int level) {
  if (ids.empty()) return kNone;
  depth_ = std::max(depth_, level);

  // The median of the 2m inclusive endpoints (begin and end - 1): at most
  // m of them lie below it, so at most m/2 intervals lie wholly below, and
  // fewer than m/2 wholly above. It is an endpoint of some interval, which
  // therefore contains it.
  std::vector<std::int64_t> endpoints;
  endpoints.reserve(2 * ids.size());
  for (const Id id : ids) {
    endpoints.push_back(intervals_[id].begin);
    endpoints.push_back(intervals_[id].end - 1);
  }
  const auto middle = endpoints.begin() + static_cast<std::ptrdiff_t>(ids.size());
  std::nth_element(endpoints.begin(), middle, endpoints.end());
  const std::int64_t center = *middle;
  std::vector<std::int64_t>().swap(endpoints);

  std::vector<Id> below, above;
  const Id first = static_cast<Id>(by_begin_.size());
  for (const Id id : ids) {
    if (intervals_[id].end - 1 < center) {
      below.push_back(id);
    } else if (intervals_[id].begin > center) {
      above.push_back(id);
    } else {
      by_begin_.push_back(id);
    }
  }
  std::vector<Id>().swap(ids);
  const Id count = static_cast<Id>(by_begin_.size()) - first;
  by_end_.insert(by_end_.end(), by_begin_.begin() + first, by_begin_.end());
  std::stable_sort(by_end_.begin() + first, by_end_.end(),
                   [this](Id a, Id b) { return intervals_[a].end > intervals_[b].end; });

  const Id node = static_cast<Id>(nodes_.size());
  nodes_.push_back(Node{center, kNone, kNone, first, count});
  // nodes_ grows during the recursion: assign through the index afterwards.
  const Id left = build(below, level + 1);
  const Id right = build(above, level + 1);
  nodes_[node].left = left;
  nodes_[node].right = right;
  return node;
}

std::vector<IntervalTree::Id> IntervalTree::overlapping(std::int64_t begin,
                                                        std::int64_t end) const {
  std::vector<Id> out;
  for_each_overlapping(begin, end, [&out](Id id) {
    out.push_back(id);
    return true;
  });
  return out;
}

std::size_t IntervalTree::memory_bytes() const {
  return intervals_.capacity() * sizeof(Interval) + nodes_.capacity() * sizeof(Node) +
         (by_begin_.capacity() + by_end_.capacity()) * sizeof(Id);
}

}  // namespace flowio::sync
