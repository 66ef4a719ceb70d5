// ByteBuffer: memory for data that is written before it is read (window
// buffers, staging for packed messages, Alltoallw shares). Unlike
// std::vector<char>, it is not zero-filled when allocated: every byte is
// packed, received or read into before use, and zero-filling a window
// would cost as much as moving it. Move-only; the memory goes with the
// buffer.
//
// Buffers of kRecycledFromBytes or more come from two_phase_buffers() and
// go back there when released, their pages still mapped: a fresh buffer of
// that size comes from mmap, and the kernel faults in and zeroes each of
// its pages as the first message lands in it, a pass over memory as long
// as the copy itself. bench/checkpoint --grid=1x1x2 on 2 ranks, whose
// aggregators each fill 8 windows of 16 MiB a call, three at a time:
// 6ba8c59:bench/README.md, "The checkpoint split along z".
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/stages/recycled_buffers.h"

namespace flowio::runtime {

class ByteBuffer {
 public:
  static constexpr std::size_t kRecycledFromBytes = 256 * 1024;

  // Makes room for `bytes` bytes, whose contents are undefined (the old
  // room is released first). Throws std::bad_alloc.
  void allocate(std::size_t bytes);
  // Releases the memory.
  void release() {
    recycled_.give_back();
    owned_.reset();
    size_ = 0;
  }
  char* data() const { return recycled_ ? recycled_.data() : owned_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  RecycledBuffers::Lease recycled_;  // kRecycledFromBytes or more
  std::unique_ptr<char[]> owned_;    // smaller
  std::size_t size_ = 0;
};

// The process's kept buffers of two-phase I/O: 64 MiB at most, the
// windows of one call at the default hints (three of 16 MiB) and some
// staging. They stay mapped while the process runs.
RecycledBuffers& two_phase_buffers();

}  // namespace flowio::runtime
