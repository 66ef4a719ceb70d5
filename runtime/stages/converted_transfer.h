// Independent transfers in a data representation other than native
// (MPI 4.1, 14.5): the data passes through staging buffers of
// `chunk_bytes`, converted one chunk of the view's stream at a time and
// moved with the naive method (io/view_transfer.h), so a write touches
// exactly its pieces' bytes.
//
// Conversion is a stage of its own that overlaps the I/O: while the
// calling thread writes chunk k, the workers of `workers` (the engine's
// oneTBB arena) convert chunks k + 1 .. k + kConversionsInFlight - 1; a
// read converts chunk k on a worker while the caller reads the next ones.
// Converting costs a pass over memory about as long as the copy a buffered
// write or read makes: done one after the other, an external32 write took
// 1.5 times a native one (bench/checkpoint, 1 rank); overlapped, it costs
// what the slower of the two costs.
//
// The calling thread waits for the workers, so it must not be one of them
// (with every worker waiting, nothing would convert): on a worker, or
// with a single chunk, the chunks are converted and moved one after the
// other on the caller.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <cstdint>

#include "exchange/stream_conversion.h"
#include "io/storage_backend.h"
#include "runtime/core/file_view.h"

namespace flowio::runtime {

// Measured with bench/checkpoint --datarep=external32 (6ba8c59:bench/README.md).
inline constexpr std::int64_t kConversionChunkBytes = 1024 * 1024;
// Chunks converted or waiting to be written at once (memory: this many
// chunks per transfer).
inline constexpr int kConversionsInFlight = 4;

// Writes the access's data, converted, to the view's stream from stream
// byte `stream_position`. Returns the stream bytes written (all of them).
// Throws IoError or UsageError(conversion) once every conversion started
// has finished.
std::int64_t write_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                             std::int64_t stream_position,
                             const exchange::StreamConversion& conversion, std::int64_t chunk_bytes,
                             tbb::task_arena& workers);

// Reads the view's stream from `stream_position`, converted into memory,
// stopping at end of file. Returns the stream bytes found before end of
// file (conversion.memory_bytes_within() of it is what memory received);
// memory of elements past end of file is left untouched.
std::int64_t read_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                            std::int64_t stream_position, exchange::StreamConversion& conversion,
                            std::int64_t chunk_bytes, tbb::task_arena& workers);

}  // namespace flowio::runtime
