// PieceCursor: walks the contiguous pieces of `count` copies of a FlatType,
// in typemap order, from any byte of the packed stream, without expanding
// the piece list.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/core/flat_type.h"

namespace flowio::core {

// A contiguous byte range [offset, offset + length).
struct Piece {
  std::int64_t offset = 0;
  std::int64_t length = 0;

  friend bool operator==(const Piece&, const Piece&) = default;
};

// Not thread-safe; the FlatType must outlive the cursor.
class PieceCursor {
 public:
  // Pieces of `count` copies of `type`, copy i at origin + i * extent,
  // starting `stream_position` bytes into the packed stream (at most
  // count * size). Throws UsageError(invalid_count) for a negative count
  // or a position outside the stream.
  PieceCursor(const FlatType& type, std::int64_t count, std::int64_t origin = 0,
              std::int64_t stream_position = 0);

  PieceCursor(const PieceCursor&) = delete;
  PieceCursor& operator=(const PieceCursor&) = delete;
  PieceCursor(PieceCursor&&) noexcept;
  PieceCursor& operator=(PieceCursor&&) noexcept;

  // Fills `out` with the next pieces, merging pieces that touch, until `out`
  // is full or `max_bytes` bytes of stream are covered. Returns the number
  // of pieces written; 0 only at the end of the stream or for max_bytes 0.
  std::size_t next(std::span<Piece> out, std::int64_t max_bytes);

  // The next single piece of at most max_bytes (merged with those that
  // touch it is not attempted). Returns false at the end of the stream.
  bool next_piece(Piece& piece, std::int64_t max_bytes);

  // Bytes of the stream consumed so far, counted from its start.
  std::int64_t position() const { return position_; }
  // count * size of the type.
  std::int64_t stream_size() const { return stream_size_; }
  bool done() const { return position_ == stream_size_; }

 private:
  struct Frame {
    const FlatNode* node;
    std::int64_t repeat_base;  // address of the current repeat of the node
    std::int64_t repeat_index;
    std::size_t block_index;
    std::int64_t copy_index;
  };

  void descend(const FlatNode* node, std::int64_t address, std::int64_t stream_offset);
  // Moves to the first byte of the next run; false at the end.
  bool advance();

  FlatNode top_;  // `count` copies of the type's root, `extent` apart
  std::vector<Frame> frames_;
  std::int64_t run_address_ = 0;
  std::int64_t run_remaining_ = 0;
  std::int64_t position_ = 0;
  std::int64_t stream_size_ = 0;
};

}  // namespace flowio::core
