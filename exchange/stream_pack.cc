#include "exchange/stream_pack.h"

#include <algorithm>
#include <cstring>

#include "runtime/core/bulk_copy.h"
#include "runtime/core/byte_order.h"

namespace flowio::exchange {
namespace {

// Visits the memory pieces of a stream range, in stream order, walking the
// flattened type's tree directly: a block of runs (a vector, the common
// memory type) is one loop with a constant stride and length, where a
// general piece cursor would pay its bookkeeping for every piece.
template <typename Copy>
class TreeWalk {
 public:
  TreeWalk(Copy& copy, std::int64_t skip, std::int64_t want)
      : copy_(copy), skip_(skip), remaining_(want) {}

  bool done() const { return remaining_ == 0; }

  // The part of one copy of `node` at `base` that falls in the range.
  void node(const core::FlatNode& n, std::int64_t base) {
    if (remaining_ == 0) return;
    if (skip_ >= n.size) {
      skip_ -= n.size;
      return;
    }
    if (n.is_run()) {
      run(base, n.size);
      return;
    }
    const std::int64_t per_repeat = n.bytes_per_repeat();
    std::int64_t r = skip_ / per_repeat;
    skip_ -= r * per_repeat;
    for (; r < n.repeat && remaining_ > 0; ++r) {
      const std::int64_t repeat_base = base + r * n.repeat_stride;
      // The first block with data past the skip: block_stream_end is sorted.
      std::size_t b = static_cast<std::size_t>(
          std::upper_bound(n.block_stream_end.begin(), n.block_stream_end.end(), skip_) -
          n.block_stream_end.begin());
      if (b > 0) skip_ -= n.block_stream_end[b - 1];
      for (; b < n.blocks.size() && remaining_ > 0; ++b) block(n.blocks[b], repeat_base);
    }
  }

 private:
  void block(const core::FlatBlock& block, std::int64_t base) {
    const core::FlatNode& child = *block.child;
    std::int64_t k = skip_ / child.size;
    skip_ -= k * child.size;
    std::int64_t address = base + block.displacement + k * block.stride;
    if (!child.is_run()) {
      for (; k < block.count && remaining_ > 0; ++k, address += block.stride) node(child, address);
      return;
    }
    const std::int64_t length = child.size;
    if (skip_ > 0 && k < block.count) {  // starts inside a run
      run(address, length);
      ++k;
      address += block.stride;
    }
    for (; k < block.count && remaining_ >= length; ++k, address += block.stride) {
      copy_(reinterpret_cast<char*>(address), at_, length);
      at_ += length;
      remaining_ -= length;
    }
    if (k < block.count && remaining_ > 0) run(address, length);  // ends inside a run
  }

  void run(std::int64_t address, std::int64_t length) {
    address += skip_;
    length -= skip_;
    skip_ = 0;
    const std::int64_t take = std::min(length, remaining_);
    copy_(reinterpret_cast<char*>(address), at_, take);
    at_ += take;
    remaining_ -= take;
  }

  Copy& copy_;
  std::int64_t skip_;
  std::int64_t remaining_;
  std::int64_t at_ = 0;  // position in the message
};

// Hands each memory piece of the stream range to `copy` with the message
// position it corresponds to.
template <typename Copy>
void walk(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes, Copy&& copy) {
  if (bytes <= 0) return;
  if (memory.contiguous()) {
    copy(reinterpret_cast<char*>(memory.address_of(from)), std::int64_t{0}, bytes);
    return;
  }
  const core::FlatType& type = *memory.type;
  const std::int64_t first_copy = from / type.size();
  TreeWalk<Copy> walker(copy, from - first_copy * type.size(), bytes);
  for (std::int64_t c = first_copy; c < memory.count && !walker.done(); ++c) {
    walker.node(type.root(), memory.buffer_address + c * type.extent());
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
      core::copy_bytes(to, from, static_cast<std::size_t>(length));
      return;
  }
}

// pack_stream_reversing for a unit known at compile time: a piece of
// whole units is reversed straight into the message; the bytes of a unit
// that a piece ends inside wait in `split` for the pieces that complete it.
template <int Unit>
void pack_reversing(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                    char* destination) {
  char split[Unit];
  std::int64_t split_bytes = 0;
  walk(memory, from, bytes,
       [destination, &split, &split_bytes](char* address, std::int64_t at, std::int64_t length) {
         if (split_bytes > 0) {
           const std::int64_t take = std::min(Unit - split_bytes, length);
           std::memcpy(split + split_bytes, address, static_cast<std::size_t>(take));
           split_bytes += take;
           address += take;
           at += take;
           length -= take;
           if (split_bytes < Unit) return;
           core::reverse_units_of<Unit>(split, destination + at - Unit, 1);
           split_bytes = 0;
         }
         const std::int64_t whole = length / Unit;
         core::reverse_units_of<Unit>(address, destination + at, whole);
         split_bytes = length - whole * Unit;
         std::memcpy(split, address + whole * Unit, static_cast<std::size_t>(split_bytes));
       });
}

// unpack_stream_reversing for a unit known at compile time. The message
// holds whole units, so a unit that a memory piece begins or ends inside
// is reversed whole from the message and the piece takes its part.
template <int Unit>
void unpack_reversing(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                      const char* source) {
  walk(memory, from, bytes, [source](char* address, std::int64_t at, std::int64_t length) {
    char unit[Unit];
    if (const std::int64_t phase = at % Unit; phase > 0) {
      core::reverse_units_of<Unit>(source + at - phase, unit, 1);
      const std::int64_t take = std::min(Unit - phase, length);
      std::memcpy(address, unit + phase, static_cast<std::size_t>(take));
      address += take;
      at += take;
      length -= take;
    }
    const std::int64_t whole = length / Unit;
    core::reverse_units_of<Unit>(source + at, address, whole);
    if (const std::int64_t rest = length - whole * Unit; rest > 0) {
      core::reverse_units_of<Unit>(source + at + whole * Unit, unit, 1);
      std::memcpy(address + whole * Unit, unit, static_cast<std::size_t>(rest));
    }
  });
}

}  // namespace

void pack_stream_reversing(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                           std::int64_t unit, char* destination) {
  switch (unit) {
    case 2:
      return pack_reversing<2>(memory, from, bytes, destination);
    case 4:
      return pack_reversing<4>(memory, from, bytes, destination);
    case 8:
      return pack_reversing<8>(memory, from, bytes, destination);
    default:
      return pack_reversing<16>(memory, from, bytes, destination);
  }
}

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

void unpack_stream_reversing(const core::MemoryLayout& memory, std::int64_t from,
                             std::int64_t bytes, std::int64_t unit, const char* source) {
  switch (unit) {
    case 2:
      return unpack_reversing<2>(memory, from, bytes, source);
    case 4:
      return unpack_reversing<4>(memory, from, bytes, source);
    case 8:
      return unpack_reversing<8>(memory, from, bytes, source);
    default:
      return unpack_reversing<16>(memory, from, bytes, source);
  }
}

}  // namespace flowio::exchange
