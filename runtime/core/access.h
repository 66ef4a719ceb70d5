// Access: the file side of one process's part in a collective operation,
// as the aggregators see it: which bytes of the file it covers and in what
// order its data stream runs through them (always file order, since views
// are monotone).
//
// Two descriptions give the same answers: a view with a range of its
// stream (compact: the flattened filetype, whatever the number of pieces)
// and an explicit, sorted list of pieces (for filetypes whose flattened
// form is larger than the list). Metadata transfer sends whichever is
// smaller.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "runtime/core/file_view.h"
#include "runtime/core/piece_cursor.h"

namespace flowio::core {

// Immutable; may be shared across threads.
class Access {
 public:
  // No data.
  Access() = default;
  // Stream bytes [stream_begin, stream_end) of `view`.
  Access(std::shared_ptr<const FileView> view, std::int64_t stream_begin, std::int64_t stream_end);
  // Explicit pieces, sorted by offset, not overlapping, none empty.
  explicit Access(std::vector<Piece> pieces);

  std::int64_t bytes() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  // [file_begin, file_end): from the first data byte to one past the last
  // (both 0 when empty).
  std::int64_t file_begin() const { return file_begin_; }
  std::int64_t file_end() const { return file_end_; }

  // An upper bound on the number of contiguous pieces (exact for a list).
  std::int64_t estimated_pieces() const;

  // Bytes of the access that lie in the file below `file_offset`.
  std::int64_t bytes_before(std::int64_t file_offset) const;
  // File offset of the access's data byte `n` (0 <= n < bytes()).
  std::int64_t offset_of(std::int64_t n) const;
  // Offset of the first data byte at or after `file_offset`; file_end()
  // when there is none.
  std::int64_t next_data_at_or_after(std::int64_t file_offset) const;

  // Calls visit(Piece) for the pieces of the access inside the file range
  // [begin, end), clipped to it, in file order.
  template <typename Visit>
  void for_each_piece(std::int64_t begin, std::int64_t end, Visit&& visit) const;

  // The view, or null for an explicit list.
  const std::shared_ptr<const FileView>& view() const { return view_; }
  std::int64_t stream_begin() const { return stream_begin_; }
  // The explicit pieces (empty for a view).
  std::span<const Piece> pieces() const { return pieces_; }

 private:
  std::shared_ptr<const FileView> view_;
  std::int64_t stream_begin_ = 0;
  std::vector<Piece> pieces_;
  std::vector<std::int64_t> bytes_through_;  // bytes of pieces_[0..i]
  std::int64_t bytes_ = 0;
  std::int64_t file_begin_ = 0;
  std::int64_t file_end_ = 0;
};

template <typename Visit>
void Access::for_each_piece(std::int64_t begin, std::int64_t end, Visit&& visit) const {
  if (end <= begin || bytes_ == 0) return;
  if (view_) {
    const std::int64_t first = bytes_before(begin);
    std::int64_t remaining = bytes_before(end) - first;
    if (remaining == 0) return;
    PieceCursor cursor = view_->file_pieces(stream_begin_ + first);
    Piece batch[256];
    while (remaining > 0) {
      const std::size_t n = cursor.next(batch, remaining);
      for (std::size_t i = 0; i < n; ++i) {
        remaining -= batch[i].length;
        visit(batch[i]);
      }
    }
    return;
  }
  auto it =
      std::upper_bound(pieces_.begin(), pieces_.end(), begin,
                       [](std::int64_t x, const Piece& p) { return x < p.offset + p.length; });
  for (; it != pieces_.end() && it->offset < end; ++it) {
    const std::int64_t from = std::max(it->offset, begin);
    const std::int64_t to = std::min(it->offset + it->length, end);
    visit(Piece{from, to - from});
  }
}

}  // namespace flowio::core
