// ByteBuffer: memory for data that is written before it is read (window
// buffers, staging for packed messages). Unlike std::vector<char>, it is
// not zero-filled when allocated: every byte is packed, received or read
// into before use, and zero-filling a window would cost as much as moving
// it. Move-only; the memory goes with the buffer.
#pragma once

#include <cstddef>
#include <memory>

namespace flowio::runtime {

class ByteBuffer {
 public:
  // Makes room for `bytes` bytes, whose contents are undefined.
  void allocate(std::size_t bytes) {
    bytes_ = std::make_unique_for_overwrite<char[]>(bytes);
    size_ = bytes;
  }
  // Frees the memory.
  void release() {
    bytes_.reset();
    size_ = 0;
  }
  char* data() const { return bytes_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<char[]> bytes_;
  std::size_t size_ = 0;
};

}  // namespace flowio::runtime
