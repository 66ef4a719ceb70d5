#include "exchange/stream_pack.h"

#include <cstring>

#include "runtime/core/piece_cursor.h"

namespace flowio::exchange {
namespace {

// Walks the memory pieces of the stream range in batches and hands each
// to `copy` with the message position it corresponds to.
template <typename Copy>
void walk(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes, Copy&& copy) {
  if (bytes <= 0) return;
  if (memory.contiguous()) {
    copy(reinterpret_cast<char*>(memory.address_of(from)), std::int64_t{0}, bytes);
    return;
  }
  core::PieceCursor cursor(*memory.type, memory.count, memory.buffer_address, from);
  core::Piece batch[512];
  std::int64_t done = 0;
  while (done < bytes) {
    const std::size_t n = cursor.next(batch, bytes - done);
    for (std::size_t i = 0; i < n; ++i) {
      copy(reinterpret_cast<char*>(batch[i].offset), done, batch[i].length);
      done += batch[i].length;
    }
  }
}

// Pieces of noncontiguous memory types are mostly small and of one size;
// a copy whose length is known at compile time is a few moves, where the
// library call would cost more than the copy itself.
inline void copy_piece(char* to, const char* from, std::int64_t length) {
  switch (length) {
    case 4:
      std::memcpy(to, from, 4);
      return;
    case 8:
      std::memcpy(to, from, 8);
      return;
    case 16:
      std::memcpy(to, from, 16);
      return;
    default:
      std::memcpy(to, from, static_cast<std::size_t>(length));
      return;
  }
}

}  // namespace

void pack_stream(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                 char* destination) {
  walk(memory, from, bytes, [destination](char* address, std::int64_t at, std::int64_t length) {
    copy_piece(destination + at, address, length);
  });
}

void unpack_stream(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                   const char* source) {
  walk(memory, from, bytes, [source](char* address, std::int64_t at, std::int64_t length) {
    copy_piece(address, source + at, length);
  });
}

}  // namespace flowio::exchange
