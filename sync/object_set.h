// ObjectSet: the objects of a file range, as the intersections of every
// process's view cut it (Logan and Dickens, "Improving I/O Performance
// through the Dynamic Remapping of Object Sets").
//
// Every byte of the range is covered by some set of processes (those whose
// view holds it). An object is a maximal run of bytes covered by the same
// nonempty set: it is private when the set is one process, shared when it
// holds several. Bytes no process covers belong to no object. Only shared
// objects can see conflicting accesses, so only they need locks in atomic
// mode; and a consumer's objects, laid out contiguously, are what remapping
// writes for it.
//
// Objects never overlap; they are kept in an IntervalTree, so "which
// objects overlap [a, b)" costs O(log n + r) and answers in file order.
// Rank sets are interned: n objects cost about 52 bytes each, plus each
// distinct set of ranks once.
//
// Built from one core::Access per process (a view with a range of its
// stream, or an explicit piece list), the way metadata transfer already
// describes accesses, without expanding the views first: the build merges
// the processes' piece streams in O(N log P) for N pieces of P processes.
//
// The set describes the views it was built from: a process that changes
// its view (set_view) makes it stale. Immutable once built; const queries
// may run on any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "sync/interval_tree.h"

namespace flowio::sync {

class ObjectSet {
 public:
  using ObjectId = IntervalTree::Id;

  // No processes, an empty range.
  ObjectSet() = default;

  // The objects of [range_begin, range_end) for the processes whose
  // accesses are given: accesses[r] is what process r covers (rank r).
  // Only bytes inside the range count. Throws UsageError(invalid_argument)
  // for a range with range_end < range_begin or a negative range_begin.
  ObjectSet(std::span<const core::Access> accesses, std::int64_t range_begin,
            std::int64_t range_end);

  // The objects of whole views, without end: views[r] is process r's (a
  // null view, or one with no data, covers nothing). A view repeats its filetype every
  // extent E_r from its displacement d_r; past S_r = d_r + the filetype's
  // true upper bound, byte x is in it exactly when x - E_r is. So past
  // S = max S_r all views together repeat with period L = lcm(E_r), and the
  // set built over [0, S + L) answers for every byte: byte x >= S + L is
  // shared as byte S + (x - S) mod L is. That range holds at most about
  // `max_pieces` pieces of all views (a subarray view of an array repeats
  // once per array: one period holds each process's tile once); when the
  // period would take more, the set covers only as much of the file as the
  // budget allows, without a period, and is conservative past it.
  static ObjectSet of_views(std::span<const std::shared_ptr<const core::FileView>> views,
                            std::int64_t max_pieces = std::int64_t{1} << 22);

  std::int64_t range_begin() const { return range_begin_; }
  std::int64_t range_end() const { return range_end_; }
  int processes() const { return processes_; }
  // For a set of whole views: L, with [range_end() - L, range_end()) the
  // period that repeats without end past range_end(); 0 for a set of a
  // range only.
  std::int64_t period() const { return period_; }

  std::size_t object_count() const { return object_sets_.size(); }
  // Object ids are 0 .. object_count() - 1 in file order.
  const Interval& object(ObjectId id) const { return tree_.interval(id); }
  // The ranks covering the object, ascending; at least one.
  std::span<const int> ranks(ObjectId id) const;
  bool shared(ObjectId id) const { return ranks(id).size() > 1; }
  // Distinct rank sets among the objects.
  std::size_t rank_set_count() const { return set_first_.size() - 1; }

  // Calls visit(ObjectId) for the objects sharing a byte with [begin, end),
  // in file order; stops when visit returns false (then returns false).
  template <typename Visit>
  bool for_each_overlapping(std::int64_t begin, std::int64_t end, Visit&& visit) const {
    return tree_.for_each_overlapping(begin, end, std::forward<Visit>(visit));
  }
  std::vector<ObjectId> overlapping(std::int64_t begin, std::int64_t end) const {
    return tree_.overlapping(begin, end);
  }

  // Whether an access of the bytes [begin, end) might conflict with another
  // process's: true when some byte lies in a shared object, or outside the
  // range (about which the set knows nothing; bytes past range_end() of a
  // set with a period are answered through it). False for an empty range.
  // This is the question atomic mode asks before taking a lock: an access
  // for which it is false touches only bytes no other process's view
  // holds, so no other process can access them.
  bool touches_shared(std::int64_t begin, std::int64_t end) const;
  // The same for every byte of `access` (a view range or a piece list).
  // O(pieces * log n) at worst; one tree query when no shared object lies
  // within the access's extent.
  bool touches_shared(const core::Access& access) const;

  // Whether a process other than `rank` might access some byte of
  // [begin, end) through its view: the byte lies in an object `rank` is
  // not in, or where the set knows nothing (as touches_shared). With
  // `private_only`, only objects private to one other process count. This
  // is what a read-modify-write of an extent asks in atomic mode: its
  // bytes outside the access must be written by nobody meanwhile; under a
  // lease over the extent, accesses of shared objects wait for it, and
  // only another process's private objects (accessed without a lock) are
  // in the way.
  bool others_may_access(std::int64_t begin, std::int64_t end, int rank, bool private_only) const;

  // The shared objects `rank` belongs to, in file order: where it shares
  // data, and (through ranks()) with whom. Objects, overlap queries and
  // this list cover [range_begin(), range_end()) only.
  std::vector<ObjectId> shared_objects_of(int rank) const;

  // Bytes this set holds (objects, tree, rank sets).
  std::size_t memory_bytes() const;

 private:
  // touches_shared inside [range_begin_, range_end_).
  bool touches_shared_in_range(std::int64_t begin, std::int64_t end) const;
  // Whether some object sharing a byte with [begin, end) matches, or some
  // byte lies where the set knows nothing (before range_begin_, or past
  // range_end_ without a period). Bytes past range_end_ are folded into
  // the period; `whole_period`, when given, answers for a whole period.
  template <typename Matches>
  bool any_object(std::int64_t begin, std::int64_t end, const Matches& matches,
                  std::optional<bool> whole_period) const;

  std::int64_t range_begin_ = 0;
  std::int64_t range_end_ = 0;
  int processes_ = 0;
  std::int64_t period_ = 0;
  bool period_has_shared_ = false;
  IntervalTree tree_;                       // the objects, ids in file order
  std::vector<std::uint32_t> object_sets_;  // rank set of each object
  // Rank set s is set_ranks_[set_first_[s], set_first_[s + 1]).
  std::vector<std::uint32_t> set_first_ = {0};
  std::vector<int> set_ranks_;
};

}  // namespace flowio::sync
