#include "runtime/stages/recycled_buffers.h"

#include <utility>

namespace flowio::runtime {

RecycledBuffers::Lease& RecycledBuffers::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    give_back();
    owner_ = std::exchange(other.owner_, nullptr);
    buffer_ = std::move(other.buffer_);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void RecycledBuffers::Lease::give_back() {
  if (buffer_ && owner_ != nullptr) owner_->keep(std::move(buffer_), capacity_);
  buffer_.reset();
  owner_ = nullptr;
  capacity_ = 0;
}

RecycledBuffers::Lease RecycledBuffers::take(std::size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    std::size_t best = kept_.size();
    for (std::size_t i = 0; i < kept_.size(); ++i) {
      if (kept_[i].capacity >= bytes &&
          (best == kept_.size() || kept_[i].capacity < kept_[best].capacity)) {
        best = i;
      }
    }
    if (best < kept_.size()) {
      Kept found = std::move(kept_[best]);
      kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(best));
      kept_bytes_ -= found.capacity;
      return Lease(this, std::move(found.buffer), found.capacity);
    }
  }
  // Not value-initialized: every byte is converted, received or read
  // before it is used.
  return Lease(this, std::make_unique_for_overwrite<char[]>(bytes), bytes);
}

void RecycledBuffers::keep(std::unique_ptr<char[]> buffer, std::size_t capacity) {
  std::vector<Kept> dropped;  // freed outside the lock
  std::lock_guard lock(mutex_);
  if (capacity > kept_bytes_limit_) return;
  kept_.push_back(Kept{std::move(buffer), capacity});
  kept_bytes_ += capacity;
  std::size_t oldest = 0;
  while (kept_bytes_ > kept_bytes_limit_) {
    kept_bytes_ -= kept_[oldest].capacity;
    dropped.push_back(std::move(kept_[oldest++]));
  }
  kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(oldest));
}

std::size_t RecycledBuffers::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return kept_bytes_;
}

RecycledBuffers& conversion_buffers() {
  static RecycledBuffers buffers(64 * 1024 * 1024);
  return buffers;
}

}  // namespace flowio::runtime
