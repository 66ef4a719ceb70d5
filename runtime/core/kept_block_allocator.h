// KeptBlockAllocator: an allocator that keeps the last block of one
// element it freed, per element type and process, for the next
// allocation of one element (taken and given back without a lock). For
// what a small call makes and frees every time (the call itself, a
// one-process file's announcements): malloc's free and a new allocation
// cost such a call as much as a clock read. Blocks of other sizes, and a
// second freed block while one is kept, go to std::allocator.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace flowio::core {

template <typename T>
inline std::atomic<void*> kept_block{nullptr};

template <typename T>
struct KeptBlockAllocator {
  using value_type = T;
  KeptBlockAllocator() = default;
  template <typename U>
  KeptBlockAllocator(const KeptBlockAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n == 1) {
      if (void* kept = kept_block<T>.exchange(nullptr, std::memory_order_acquire)) {
        return static_cast<T*>(kept);
      }
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* block, std::size_t n) {
    void* none = nullptr;
    if (n == 1 && kept_block<T>.compare_exchange_strong(none, block, std::memory_order_release,
                                                        std::memory_order_relaxed)) {
      return;
    }
    std::allocator<T>().deallocate(block, n);
  }
  template <typename U>
  bool operator==(const KeptBlockAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace flowio::core
