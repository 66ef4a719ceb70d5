#include "sync/object_set.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>

#include "flowio/error.h"

namespace flowio::sync {
namespace {

// The pieces of one process's access inside [begin, end), pulled one at a
// time in file order: the k-way merge below needs to pull, and
// Access::for_each_piece pushes.
class PieceSource {
 public:
  PieceSource(const core::Access& access, std::int64_t begin, std::int64_t end)
      : access_(access), begin_(begin), end_(end) {
    if (access.empty()) return;
    if (access.view()) {
      // bytes_before counts exactly the access's bytes below an offset, so
      // the cursor's pieces over that stream range lie inside the range.
      const std::int64_t first = access.bytes_before(begin);
      remaining_ = access.bytes_before(end) - first;
      if (remaining_ > 0)
        cursor_.emplace(access.view()->file_pieces(access.stream_begin() + first));
      return;
    }
    const std::span<const core::Piece> pieces = access.pieces();
    next_index_ =
        static_cast<std::size_t>(std::upper_bound(pieces.begin(), pieces.end(), begin,
                                                  [](std::int64_t x, const core::Piece& p) {
                                                    return x < p.offset + p.length;
                                                  }) -
                                 pieces.begin());
  }

  // The next piece, nonempty; false at the end.
  bool next(core::Piece& piece) {
    if (cursor_) {
      if (batch_index_ == batch_size_) {
        if (remaining_ == 0) return false;
        batch_size_ = cursor_->next(batch_, remaining_);
        batch_index_ = 0;
        if (batch_size_ == 0) return false;
      }
      piece = batch_[batch_index_++];
      remaining_ -= piece.length;
      return true;
    }
    const std::span<const core::Piece> pieces = access_.pieces();
    if (next_index_ >= pieces.size() || pieces[next_index_].offset >= end_) return false;
    const core::Piece& listed = pieces[next_index_++];
    const std::int64_t from = std::max(listed.offset, begin_);
    const std::int64_t to = std::min(listed.offset + listed.length, end_);
    piece = core::Piece{from, to - from};
    return true;
  }

 private:
  const core::Access& access_;
  std::int64_t begin_;
  std::int64_t end_;
  std::optional<core::PieceCursor> cursor_;
  std::int64_t remaining_ = 0;
  core::Piece batch_[64];
  std::size_t batch_size_ = 0;
  std::size_t batch_index_ = 0;
  std::size_t next_index_ = 0;
};

struct RanksHash {
  std::size_t operator()(const std::vector<int>& ranks) const noexcept {
    std::size_t hash = 1469598103934665603ull;
    for (const int rank : ranks) hash = (hash ^ static_cast<std::size_t>(rank)) * 1099511628211ull;
    return hash;
  }
};

}  // namespace

ObjectSet::ObjectSet(std::span<const core::Access> accesses, std::int64_t range_begin,
                     std::int64_t range_end)
    : range_begin_(range_begin),
      range_end_(range_end),
      processes_(static_cast<int>(accesses.size())) {
  if (range_begin < 0 || range_end < range_begin) {
    throw UsageError(ErrorCode::invalid_argument, "object set: bad file range [" +
                                                      std::to_string(range_begin) + ", " +
                                                      std::to_string(range_end) + ")");
  }

  // A sweep over the integer line: each process has a current piece, and
  // its next boundary (the piece's start, or its end once inside) waits in
  // a min-heap. All boundaries at one position are taken before the set of
  // covering processes is compared with the current object's: a piece that
  // ends where the same process's next begins changes nothing.
  std::vector<PieceSource> sources;
  sources.reserve(accesses.size());
  std::vector<core::Piece> current(accesses.size());
  std::vector<char> inside(accesses.size(), 0);
  using Boundary = std::pair<std::int64_t, int>;  // (position, rank)
  std::priority_queue<Boundary, std::vector<Boundary>, std::greater<>> boundaries;
  for (int rank = 0; rank < processes_; ++rank) {
    sources.emplace_back(accesses[static_cast<std::size_t>(rank)], range_begin, range_end);
    if (sources.back().next(current[static_cast<std::size_t>(rank)])) {
      boundaries.emplace(current[static_cast<std::size_t>(rank)].offset, rank);
    }
  }

  std::unordered_map<std::vector<int>, std::uint32_t, RanksHash> set_ids;
  std::vector<int> covering;  // ascending
  std::vector<Interval> objects;
  constexpr std::uint32_t kNoSet = 0xffffffffu;
  std::uint32_t open_set = kNoSet;
  std::int64_t open_begin = 0;
  while (!boundaries.empty()) {
    const std::int64_t position = boundaries.top().first;
    while (!boundaries.empty() && boundaries.top().first == position) {
      const int rank = boundaries.top().second;
      const auto r = static_cast<std::size_t>(rank);
      boundaries.pop();
      if (!inside[r]) {
        inside[r] = 1;
        covering.insert(std::lower_bound(covering.begin(), covering.end(), rank), rank);
        boundaries.emplace(current[r].offset + current[r].length, rank);
      } else {
        inside[r] = 0;
        covering.erase(std::lower_bound(covering.begin(), covering.end(), rank));
        if (sources[r].next(current[r])) boundaries.emplace(current[r].offset, rank);
      }
    }
    std::uint32_t set = kNoSet;
    if (!covering.empty()) {
      const auto found = set_ids.find(covering);
      if (found != set_ids.end()) {
        set = found->second;
      } else {
        set = static_cast<std::uint32_t>(set_first_.size() - 1);
        set_ids.emplace(covering, set);
        set_ranks_.insert(set_ranks_.end(), covering.begin(), covering.end());
        set_first_.push_back(static_cast<std::uint32_t>(set_ranks_.size()));
      }
    }
    if (set == open_set) continue;
    if (open_set != kNoSet) {
      objects.push_back(Interval{open_begin, position});
      object_sets_.push_back(open_set);
    }
    open_set = set;
    open_begin = position;
  }
  tree_ = IntervalTree(std::move(objects));
  object_sets_.shrink_to_fit();
}

std::span<const int> ObjectSet::ranks(ObjectId id) const {
  const std::uint32_t set = object_sets_[id];
  return std::span<const int>(set_ranks_)
      .subspan(set_first_[set], set_first_[set + 1] - set_first_[set]);
}

ObjectSet ObjectSet::of_views(std::span<const std::shared_ptr<const core::FileView>> views,
                              std::int64_t max_pieces) {
  constexpr std::int64_t kLimit = std::numeric_limits<std::int64_t>::max() / 4;
  std::int64_t start = 0, period = 1;
  // The period (lcm of the extents) and where it starts (the largest
  // S_r), and the views' pieces per byte, which prices the range.
  bool fits = true;
  double pieces_per_byte = 0;
  for (const auto& view : views) {
    if (!view || view->filetype().size() == 0) continue;
    const core::FlatType& type = view->filetype();
    start = std::max(start, view->displacement() + type.true_lb() + type.true_extent());
    const std::int64_t extent = type.extent();
    const std::int64_t common = std::gcd(period, extent);
    if (period / common > kLimit / extent) {
      fits = false;
    } else {
      period = period / common * extent;
    }
    pieces_per_byte += static_cast<double>(type.run_count()) / static_cast<double>(extent);
  }
  const double pieces =
      pieces_per_byte * (static_cast<double>(start) + static_cast<double>(period));
  std::vector<core::Access> accesses;
  const auto build = [&](std::int64_t end) {
    accesses.clear();
    for (const auto& view : views) {
      const bool data = view && view->filetype().size() > 0;
      accesses.emplace_back(view, 0, data ? view->stream_bytes_before(end) : 0);
    }
    return ObjectSet(accesses, 0, end);
  };
  if (fits && start <= kLimit - period && pieces <= static_cast<double>(max_pieces)) {
    ObjectSet set = build(start + period);
    set.period_ = period;
    set.period_has_shared_ = set.touches_shared_in_range(set.range_end_ - period, set.range_end_);
    return set;
  }
  // Too long a period: as much of the file as the budget covers.
  const double bytes = pieces_per_byte > 0 ? static_cast<double>(max_pieces) / pieces_per_byte
                                           : static_cast<double>(kLimit);
  return build(static_cast<std::int64_t>(std::min(bytes, static_cast<double>(kLimit))));
}

bool ObjectSet::touches_shared_in_range(std::int64_t begin, std::int64_t end) const {
  return !tree_.for_each_overlapping(begin, end, [this](ObjectId id) { return !shared(id); });
}

template <typename Matches>
bool ObjectSet::any_object(std::int64_t begin, std::int64_t end, const Matches& matches,
                           std::optional<bool> whole_period) const {
  if (end <= begin) return false;
  if (begin < range_begin_) return true;
  const auto in_range = [&](std::int64_t from, std::int64_t to) {
    return !tree_.for_each_overlapping(from, to, [&](ObjectId id) { return !matches(id); });
  };
  if (end <= range_end_) return in_range(begin, end);
  if (period_ == 0) return true;
  // Past range_end_ the period repeats: fold what lies there into it.
  if (begin < range_end_ && in_range(begin, range_end_)) return true;
  const std::int64_t first = std::max(begin, range_end_);
  const std::int64_t period_start = range_end_ - period_;
  if (end - first >= period_) {
    return whole_period ? *whole_period : in_range(period_start, range_end_);
  }
  const std::int64_t folded = period_start + (first - period_start) % period_;
  const std::int64_t folded_end = folded + (end - first);
  if (folded_end <= range_end_) return in_range(folded, folded_end);
  return in_range(folded, range_end_) ||
         in_range(period_start, period_start + (folded_end - range_end_));
}

bool ObjectSet::touches_shared(std::int64_t begin, std::int64_t end) const {
  return any_object(
      begin, end, [this](ObjectId id) { return shared(id); }, period_has_shared_);
}

bool ObjectSet::others_may_access(std::int64_t begin, std::int64_t end, int rank,
                                  bool private_only) const {
  return any_object(
      begin, end,
      [&](ObjectId id) {
        const std::span<const int> members = ranks(id);
        if (private_only) return members.size() == 1 && members.front() != rank;
        return !std::binary_search(members.begin(), members.end(), rank);
      },
      std::nullopt);
}

bool ObjectSet::touches_shared(const core::Access& access) const {
  if (access.empty()) return false;
  if (!touches_shared(access.file_begin(), access.file_end())) return false;
  if (access.file_begin() < range_begin_) return true;
  if (access.file_end() > range_end_) {
    if (period_ == 0) return true;
    // Pieces past the built range fold into the period one by one.
    PieceSource pieces(access, access.file_begin(), access.file_end());
    core::Piece piece;
    while (pieces.next(piece)) {
      if (touches_shared(piece.offset, piece.offset + piece.length)) return true;
    }
    return false;
  }
  // Some shared object lies within the extent; whether a piece meets one
  // takes a look at each piece. Pieces come in file order and objects are
  // disjoint, so a pointer into the shared objects only moves forward.
  std::vector<ObjectId> shared_within;
  tree_.for_each_overlapping(access.file_begin(), access.file_end(), [&](ObjectId id) {
    if (shared(id)) shared_within.push_back(id);
    return true;
  });
  PieceSource pieces(access, access.file_begin(), access.file_end());
  std::size_t next = 0;
  core::Piece piece;
  while (next < shared_within.size() && pieces.next(piece)) {
    while (next < shared_within.size() && object(shared_within[next]).end <= piece.offset) ++next;
    if (next < shared_within.size() &&
        object(shared_within[next]).begin < piece.offset + piece.length) {
      return true;
    }
  }
  return false;
}

std::vector<ObjectSet::ObjectId> ObjectSet::shared_objects_of(int rank) const {
  std::vector<ObjectId> out;
  for (ObjectId id = 0; id < object_count(); ++id) {
    const std::span<const int> members = ranks(id);
    if (members.size() > 1 && std::binary_search(members.begin(), members.end(), rank)) {
      out.push_back(id);
    }
  }
  return out;
}

std::size_t ObjectSet::memory_bytes() const {
  return tree_.memory_bytes() + object_sets_.capacity() * sizeof(std::uint32_t) +
         set_first_.capacity() * sizeof(std::uint32_t) + set_ranks_.capacity() * sizeof(int);
}

}  // namespace flowio::sync
