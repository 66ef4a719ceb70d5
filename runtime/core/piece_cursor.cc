#include "runtime/core/piece_cursor.h"

#include <algorithm>
#include <string>

#include "flowio/error.h"

namespace flowio::core {

PieceCursor::PieceCursor(const FlatType& type, std::int64_t count, std::int64_t origin,
                         std::int64_t stream_position) {
  if (count < 0) throw UsageError(ErrorCode::invalid_count, "negative count");
  const std::int64_t size = type.size();
  if (size > 0 && count > INT64_MAX / size) {
    throw UsageError(ErrorCode::invalid_count, "count * datatype size overflows 64 bits");
  }
  stream_size_ = count * size;
  if (stream_position < 0 || stream_position > stream_size_) {
    throw UsageError(ErrorCode::invalid_argument,
                     "stream position " + std::to_string(stream_position) + " outside [0, " +
                         std::to_string(stream_size_) + "]");
  }
  position_ = stream_position;
  if (done()) return;
  if (type.is_contiguous()) {
    // One run for all copies: walking copy by copy would cost a step per
    // copy (a step per byte for MPI_BYTE).
    top_.blocks.push_back(FlatBlock{type.true_lb(), 1, 0, make_run(stream_size_)});
    top_.block_stream_end.push_back(stream_size_);
  } else {
    top_.repeat = count;
    top_.repeat_stride = type.extent();
    top_.blocks.push_back(FlatBlock{0, 1, 0, type.root_ptr()});
    top_.block_stream_end.push_back(size);
  }
  top_.size = stream_size_;
  descend(&top_, origin, stream_position);
}

PieceCursor::PieceCursor(PieceCursor&& other) noexcept { *this = std::move(other); }

PieceCursor& PieceCursor::operator=(PieceCursor&& other) noexcept {
  if (this == &other) return *this;
  top_ = std::move(other.top_);
  frames_ = std::move(other.frames_);
  // The bottom frame points at the cursor's own top node.
  if (!frames_.empty()) frames_.front().node = &top_;
  run_address_ = other.run_address_;
  run_remaining_ = other.run_remaining_;
  position_ = other.position_;
  stream_size_ = other.stream_size_;
  other.frames_.clear();
  other.position_ = other.stream_size_ = 0;
  return *this;
}

void PieceCursor::descend(const FlatNode* node, std::int64_t address, std::int64_t stream_offset) {
  while (!node->is_run()) {
    const std::int64_t per_repeat = node->bytes_per_repeat();
    const std::int64_t repeat_index = stream_offset / per_repeat;
    stream_offset -= repeat_index * per_repeat;
    std::size_t block_index = 0;
    if (stream_offset > 0 && node->blocks.size() > 1) {
      block_index =
          static_cast<std::size_t>(std::upper_bound(node->block_stream_end.begin(),
                                                    node->block_stream_end.end(), stream_offset) -
                                   node->block_stream_end.begin());
      if (block_index > 0) stream_offset -= node->block_stream_end[block_index - 1];
    }
    const FlatBlock& block = node->blocks[block_index];
    const std::int64_t copy_index = stream_offset / block.child->size;
    stream_offset -= copy_index * block.child->size;
    const std::int64_t repeat_base = address + repeat_index * node->repeat_stride;
    frames_.push_back(Frame{node, repeat_base, repeat_index, block_index, copy_index});
    address = repeat_base + block.displacement + copy_index * block.stride;
    node = block.child.get();
  }
  run_address_ = address + stream_offset;
  run_remaining_ = node->size - stream_offset;
}

bool PieceCursor::advance() {
  while (!frames_.empty()) {
    Frame& frame = frames_.back();
    const FlatNode& node = *frame.node;
    const FlatBlock* block = &node.blocks[frame.block_index];
    if (++frame.copy_index < block->count) {
      const std::int64_t address =
          frame.repeat_base + block->displacement + frame.copy_index * block->stride;
      if (block->child->is_run()) {
        // The common innermost step, kept free of the general descent.
        run_address_ = address;
        run_remaining_ = block->child->size;
        return true;
      }
      descend(block->child.get(), address, 0);
      return true;
    }
    frame.copy_index = 0;
    if (++frame.block_index < node.blocks.size()) {
      block = &node.blocks[frame.block_index];
      descend(block->child.get(), frame.repeat_base + block->displacement, 0);
      return true;
    }
    frame.block_index = 0;
    if (++frame.repeat_index < node.repeat) {
      frame.repeat_base += node.repeat_stride;
      block = &node.blocks[0];
      descend(block->child.get(), frame.repeat_base + block->displacement, 0);
      return true;
    }
    frames_.pop_back();
  }
  return false;
}

bool PieceCursor::next_piece(Piece& piece, std::int64_t max_bytes) {
  if (done() || max_bytes <= 0) return false;
  const std::int64_t take = std::min(run_remaining_, max_bytes);
  piece = Piece{run_address_, take};
  run_address_ += take;
  run_remaining_ -= take;
  position_ += take;
  if (run_remaining_ == 0 && !done()) advance();
  return true;
}

std::size_t PieceCursor::next(std::span<Piece> out, std::int64_t max_bytes) {
  std::size_t filled = 0;
  while (!done() && max_bytes > 0) {
    const std::int64_t take = std::min(run_remaining_, max_bytes);
    if (filled > 0 && out[filled - 1].offset + out[filled - 1].length == run_address_) {
      out[filled - 1].length += take;
    } else if (filled < out.size()) {
      out[filled++] = Piece{run_address_, take};
    } else {
      break;
    }
    run_address_ += take;
    run_remaining_ -= take;
    position_ += take;
    max_bytes -= take;
    if (run_remaining_ == 0 && !done()) advance();
  }
  return filled;
}

}  // namespace flowio::core
