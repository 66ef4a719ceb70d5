#include "io/iovec_cursor.h"

#include <sys/stat.h>

#include <algorithm>

namespace flowio::io {

CallLimit::CallLimit(int fd, bool writing, std::size_t longest) : writing_(writing) {
  struct stat status {};
  if (writing && longest > max_write_bytes_per_call && ::fstat(fd, &status) == 0) {
    file_size_ = status.st_size;
  }
}

IovecCursor::IovecCursor(std::span<const iovec> memory) noexcept : memory_(memory) {
  for (const iovec& piece : memory_) remaining_ += piece.iov_len;
  skip_empty();
}

std::span<const iovec> IovecCursor::window(std::vector<iovec>& scratch, std::size_t max_iovecs,
                                           std::size_t max_bytes) const {
  // First pass: how many iovecs the window spans and how long its last one is.
  std::size_t count = 0;
  std::size_t bytes = 0;
  std::size_t last_length = 0;
  bool adjusted = offset_ != 0;
  for (std::size_t i = index_; i < memory_.size() && count < max_iovecs && bytes < max_bytes; ++i) {
    std::size_t length = memory_[i].iov_len - (i == index_ ? offset_ : 0);
    if (length > max_bytes - bytes) {
      length = max_bytes - bytes;
      adjusted = true;
    }
    bytes += length;
    last_length = length;
    ++count;
  }
  if (!adjusted) return memory_.subspan(index_, count);

  scratch.assign(memory_.begin() + static_cast<std::ptrdiff_t>(index_),
                 memory_.begin() + static_cast<std::ptrdiff_t>(index_ + count));
  scratch.front().iov_base = static_cast<char*>(scratch.front().iov_base) + offset_;
  scratch.front().iov_len -= offset_;
  scratch.back().iov_len = last_length;
  return scratch;
}

void IovecCursor::advance(std::size_t bytes) noexcept {
  remaining_ -= bytes;
  while (bytes > 0) {
    const std::size_t left_in_piece = memory_[index_].iov_len - offset_;
    if (bytes < left_in_piece) {
      offset_ += bytes;
      return;
    }
    bytes -= left_in_piece;
    ++index_;
    offset_ = 0;
    skip_empty();
  }
}

void IovecCursor::skip_empty() noexcept {
  while (index_ < memory_.size() && memory_[index_].iov_len == 0) ++index_;
}

}  // namespace flowio::io
