// Packing and unpacking: copying a range of a process's data stream between
// its typed memory buffer and a contiguous message buffer.
#pragma once

#include <cstdint>

#include "runtime/core/memory_layout.h"

namespace flowio::exchange {

// Copies stream bytes [from, from + bytes) of `memory` to `destination`.
void pack_stream(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                 char* destination);

// Copies `bytes` bytes from `source` to stream bytes [from, from + bytes)
// of `memory`.
void unpack_stream(const core::MemoryLayout& memory, std::int64_t from, std::int64_t bytes,
                   const char* source);

}  // namespace flowio::exchange
