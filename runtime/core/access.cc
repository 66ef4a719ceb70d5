#include "runtime/core/access.h"

#include <algorithm>

namespace flowio::core {

Access::Access(std::shared_ptr<const FileView> view, std::int64_t stream_begin,
               std::int64_t stream_end)
    : view_(std::move(view)), stream_begin_(stream_begin), bytes_(stream_end - stream_begin) {
  if (bytes_ <= 0) {
    view_.reset();
    bytes_ = 0;
    return;
  }
  file_begin_ = view_->file_offset_of(stream_begin);
  file_end_ = view_->file_offset_of(stream_end - 1) + 1;
}

Access::Access(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {
  bytes_through_.reserve(pieces_.size());
  for (const Piece& piece : pieces_) {
    bytes_ += piece.length;
    bytes_through_.push_back(bytes_);
  }
  if (!pieces_.empty()) {
    file_begin_ = pieces_.front().offset;
    file_end_ = pieces_.back().offset + pieces_.back().length;
  }
}

std::int64_t Access::estimated_pieces() const {
  if (bytes_ == 0) return 0;
  if (!view_) return static_cast<std::int64_t>(pieces_.size());
  const FlatType& type = view_->filetype();
  if (type.is_contiguous()) return 1;
  // Tiles the range touches, each with at most run_count() pieces.
  const std::int64_t tiles = (bytes_ + type.size() - 1) / type.size() + 1;
  return tiles * type.run_count();
}

std::int64_t Access::bytes_before(std::int64_t file_offset) const {
  if (bytes_ == 0 || file_offset <= file_begin_) return 0;
  if (file_offset >= file_end_) return bytes_;
  if (view_) {
    return std::clamp<std::int64_t>(view_->stream_bytes_before(file_offset) - stream_begin_, 0,
                                    bytes_);
  }
  // The first piece that ends after the offset holds it or lies above it.
  const auto it =
      std::upper_bound(pieces_.begin(), pieces_.end(), file_offset,
                       [](std::int64_t x, const Piece& p) { return x < p.offset + p.length; });
  const std::size_t index = static_cast<std::size_t>(it - pieces_.begin());
  const std::int64_t below = index == 0 ? 0 : bytes_through_[index - 1];
  return below + std::max<std::int64_t>(0, file_offset - it->offset);
}

std::int64_t Access::offset_of(std::int64_t n) const {
  if (view_) return view_->file_offset_of(stream_begin_ + n);
  const auto it = std::upper_bound(bytes_through_.begin(), bytes_through_.end(), n);
  const std::size_t index = static_cast<std::size_t>(it - bytes_through_.begin());
  const std::int64_t below = index == 0 ? 0 : bytes_through_[index - 1];
  return pieces_[index].offset + (n - below);
}

std::int64_t Access::next_data_at_or_after(std::int64_t file_offset) const {
  const std::int64_t n = bytes_before(file_offset);
  if (n >= bytes_) return file_end_;
  return std::max(file_offset, offset_of(n));
}

}  // namespace flowio::core
