// Routing source bytes into an object file: the translator's plan for one
// window of the source file, built, as the paper's translator does, from
// the consumers' object set. Every object of the window is held by one or
// more consumers; its bytes go to each of their sections (shared objects
// are replicated), at the position the object has in that consumer's view
// stream.
//
// Pure logic: no I/O, no MPI calls. Used by the offline translator (each
// window of the source read whole) and by the producer-side writer (the
// producer's own pieces, which may be sparse: each is looked up in the
// object set's interval tree).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/piece_cursor.h"
#include "runtime/object_file_index.h"
#include "sync/object_set.h"

namespace flowio::runtime {

// `length` bytes from position `source` of the source data in memory to
// offset `target` of the object file.
struct Copy {
  std::int64_t source = 0;
  std::int64_t target = 0;
  std::int64_t length = 0;

  friend bool operator==(const Copy&, const Copy&) = default;
};

// A stretch of the object file, contiguous, and the copies that fill it:
// copies[first_copy, first_copy + copy_count), in target order.
struct TargetRun {
  std::int64_t target = 0;
  std::int64_t length = 0;
  std::size_t first_copy = 0;
  std::size_t copy_count = 0;
};

// Immutable once built; route() may run on several threads at once.
class WindowRoute {
 public:
  // The consumers' objects in the source file range [begin, end) (clipped
  // to the source's size), and where each starts in each of its consumers'
  // sections.
  WindowRoute(const ObjectFileIndex& index, std::int64_t begin, std::int64_t end);

  // Appends the copies that place the source bytes of file piece `piece`
  // (inside the window), held in memory at `position`: one per object the
  // piece meets and consumer holding it, clipped to the piece.
  void route(const core::Piece& piece, std::int64_t position, std::vector<Copy>& out) const;

  const sync::ObjectSet& objects() const { return objects_; }
  // Bytes the consumers' sections take from the window (a byte shared by
  // k consumers counts k times): what routing the whole window copies.
  std::int64_t routed_bytes() const { return routed_bytes_; }

 private:
  sync::ObjectSet objects_;
  // targets_[first_target_[o] + k]: where object o starts in the section of
  // its k-th consumer (ranks(o)[k]).
  std::vector<std::size_t> first_target_;
  std::vector<std::int64_t> targets_;
  std::int64_t routed_bytes_ = 0;
};

// Sorts `copies` by target, joins neighbours that continue each other in
// both source and target (a tile row's private and shared parts become one
// copy), and cuts the result into runs contiguous in the target. Copies
// must not overlap in the target.
std::vector<TargetRun> plan_runs(std::vector<Copy>& copies);

}  // namespace flowio::runtime
