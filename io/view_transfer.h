// Transfers between a typed memory buffer and a file view by the naive
// method: every contiguous file piece becomes one request (its memory side
// an iovec list), submitted in large batches, so a write touches exactly
// the bytes of its pieces and nothing else: no read-modify-write, hence
// safe without locks. An access contiguous in memory through a contiguous
// view is one request, made without allocating. (Independent accesses
// choose among more methods: independent_transfer.h.)
#pragma once

#include <cstdint>

#include "io/storage_backend.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"

namespace flowio::io {

// Writes the memory's data to the view's stream from stream byte
// `stream_position`. Throws IoError on failure. Returns the bytes written.
std::int64_t write_to_view(StorageBackend& backend, int fd, const core::FileView& view,
                           std::int64_t stream_position, const core::MemoryLayout& memory);

// Reads the view's stream from `stream_position` into the memory. The read
// stops at end of file: returns the bytes read, a prefix of the stream;
// memory for the bytes past end of file is left untouched.
std::int64_t read_from_view(StorageBackend& backend, int fd, const core::FileView& view,
                            std::int64_t stream_position, const core::MemoryLayout& memory);

}  // namespace flowio::io
