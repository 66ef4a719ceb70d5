// Independent transfers in a data representation other than native
// (MPI 4.1, 14.5): the data passes through a staging buffer of at most
// `staging_bytes`, converted one chunk of the view's stream at a time and
// moved with the naive method (io/view_transfer.h), so a write touches
// exactly its pieces' bytes. A chunk that fits in the processor's cache
// (kConversionChunkBytes) is still there when the write copies it out:
// the conversion then costs little more than the copy it precedes.
#pragma once

#include <cstdint>

#include "exchange/stream_conversion.h"
#include "io/storage_backend.h"
#include "runtime/core/file_view.h"

namespace flowio::runtime {

// Measured with bench/checkpoint --datarep=external32 (bench/README.md):
// below a core's L2 cache.
inline constexpr std::int64_t kConversionChunkBytes = 256 * 1024;

// Writes the access's data, converted, to the view's stream from stream
// byte `stream_position`. Returns the stream bytes written (all of them).
// Throws IoError or UsageError(conversion).
std::int64_t write_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                             std::int64_t stream_position,
                             const exchange::StreamConversion& conversion,
                             std::int64_t staging_bytes);

// Reads the view's stream from `stream_position`, converted into memory,
// stopping at end of file. Returns the stream bytes found before end of
// file (conversion.memory_bytes_within() of it is what memory received);
// memory of elements past end of file is left untouched.
std::int64_t read_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                            std::int64_t stream_position, exchange::StreamConversion& conversion,
                            std::int64_t staging_bytes);

}  // namespace flowio::runtime
