#include "runtime/remap_route.h"

#include <algorithm>

namespace flowio::runtime {

WindowRoute::WindowRoute(const ObjectFileIndex& index, std::int64_t begin, std::int64_t end)
    : objects_(index.consumers(), begin, std::max(begin, std::min(end, index.source_size()))) {
  // Walking the objects in file order, each consumer's bytes in the window
  // are consecutive in its stream: one position per consumer, found once,
  // then advanced by every object it holds.
  std::vector<std::int64_t> position(index.consumer_count(), -1);
  first_target_.reserve(objects_.object_count());
  for (sync::ObjectSet::ObjectId id = 0; id < objects_.object_count(); ++id) {
    const sync::Interval& object = objects_.object(id);
    first_target_.push_back(targets_.size());
    for (const int consumer : objects_.ranks(id)) {
      const auto c = static_cast<std::size_t>(consumer);
      if (position[c] < 0) position[c] = index.consumer(c).bytes_before(object.begin);
      targets_.push_back(index.section(c).offset + position[c]);
      position[c] += object.end - object.begin;
      routed_bytes_ += object.end - object.begin;
    }
  }
}

void WindowRoute::route(const core::Piece& piece, std::int64_t position,
                        std::vector<Copy>& out) const {
  const std::int64_t piece_end = piece.offset + piece.length;
  objects_.for_each_overlapping(piece.offset, piece_end, [&](sync::ObjectSet::ObjectId id) {
    const sync::Interval& object = objects_.object(id);
    const std::int64_t from = std::max(object.begin, piece.offset);
    const std::int64_t to = std::min(object.end, piece_end);
    const std::size_t members = objects_.ranks(id).size();
    for (std::size_t k = 0; k < members; ++k) {
      out.push_back(Copy{position + (from - piece.offset),
                         targets_[first_target_[id] + k] + (from - object.begin), to - from});
    }
    return true;
  });
}

std::vector<TargetRun> plan_runs(std::vector<Copy>& copies) {
  std::sort(copies.begin(), copies.end(),
            [](const Copy& a, const Copy& b) { return a.target < b.target; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (kept > 0) {
      Copy& last = copies[kept - 1];
      if (last.target + last.length == copies[i].target &&
          last.source + last.length == copies[i].source) {
        last.length += copies[i].length;
        continue;
      }
    }
    copies[kept++] = copies[i];
  }
  copies.resize(kept);
  std::vector<TargetRun> runs;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (!runs.empty() && runs.back().target + runs.back().length == copies[i].target) {
      runs.back().length += copies[i].length;
      ++runs.back().copy_count;
    } else {
      runs.push_back(TargetRun{copies[i].target, copies[i].length, i, 1});
    }
  }
  return runs;
}

}  // namespace flowio::runtime
