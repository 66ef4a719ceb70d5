#include "runtime/stages/byte_buffer.h"

namespace flowio::runtime {

void ByteBuffer::allocate(std::size_t bytes) {
  release();
  if (bytes >= kRecycledFromBytes) {
    recycled_ = two_phase_buffers().take(bytes);
  } else {
    owned_ = std::make_unique_for_overwrite<char[]>(bytes);
  }
  size_ = bytes;
}

RecycledBuffers& two_phase_buffers() {
  static RecycledBuffers buffers(64 * 1024 * 1024);
  return buffers;
}

}  // namespace flowio::runtime
