// CheckpointBuffer: one rank's checkpoint in memory, page-aligned so that
// flowio can hand it to O_DIRECT (hint flowio_direct_io) and the device
// reads it by DMA instead of the CPU copying it into the page cache; and
// checksum(), which the analysis compares the checkpoints read back with.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace insitu {

// An allocator whose memory starts on a page boundary (the alignment
// O_DIRECT asks of memory on Linux file systems).
template <typename T>
struct PageAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{4096};
  PageAlignedAllocator() = default;
  template <typename U>
  PageAlignedAllocator(const PageAlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* memory, std::size_t) noexcept { ::operator delete(memory, kAlignment); }
  template <typename U>
  bool operator==(const PageAlignedAllocator<U>&) const noexcept {
    return true;
  }
};

using CheckpointBuffer = std::vector<double, PageAlignedAllocator<double>>;

// FNV-1a over 64-bit words. Each word's step is a bijection of the running
// hash, so a single changed word always changes the result; several
// changes (a misplaced block) go unnoticed with probability about 2^-64.
inline std::uint64_t checksum(const CheckpointBuffer& values) {
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (double value : values) hash = (hash ^ std::bit_cast<std::uint64_t>(value)) * 0x100000001b3u;
  return hash;
}

}  // namespace insitu
