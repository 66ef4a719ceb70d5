// Packing and unpacking: copying a range of a process's data stream between
// its typed memory buffer and a contiguous message buffer.
#pragma once

#include <cstdint>

#include "runtime/core/memory_layout.h"

namespace flowio::exchange {

// Copies stream bytes [from, from + bytes) of `memory` to `destination`.
void pack_stream(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                 char* destination);

// pack_stream reversing the byte order of every `unit`-byte unit (2, 4, 8
// or 16) of the stream on the way, the units counted from stream byte 0:
// external32 of a stream whose elements are all units of one size
// (StreamConversion::reversed_unit()), converted in the one pass that
// gathers the memory. `from` and `bytes` are multiples of `unit`; a unit
// may lie in two memory pieces.
void pack_stream_reversing(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                           std::int64_t unit, char* destination);

// Copies `bytes` bytes from `source` to stream bytes [from, from + bytes)
// of `memory`.
void unpack_stream(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                   const char* source);

// unpack_stream reversing the byte order of every `unit`-byte unit on
// the way, as pack_stream_reversing: reads the external32 bytes of such a
// stream into memory in one pass. `from` and `bytes` are multiples of
// `unit`.
void unpack_stream_reversing(const core::MemoryLayout& memory, std::int64_t from,
                             std::int64_t bytes, std::int64_t unit, const char* source);

}  // namespace flowio::exchange
