#include "runtime/converted_transfer.h"

#include <algorithm>
#include <memory>

#include "io/view_transfer.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"

namespace flowio::runtime {
namespace {

// Chunks of whole file-stream bytes; the conversion handles elements that
// a chunk boundary splits.
struct Staging {
  explicit Staging(std::int64_t total, std::int64_t limit)
      : chunk(std::max<std::int64_t>(1, std::min(total, limit))),
        // Not value-initialized: every byte is converted or read before use.
        buffer(std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(chunk))),
        bytes(core::make_run(1), 0, 1) {}

  core::MemoryLayout layout(std::int64_t length) const {
    return core::MemoryLayout{&bytes, length, reinterpret_cast<std::int64_t>(buffer.get())};
  }

  std::int64_t chunk;
  std::unique_ptr<char[]> buffer;
  core::FlatType bytes;
};

}  // namespace

std::int64_t write_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                             std::int64_t stream_position,
                             const exchange::StreamConversion& conversion,
                             std::int64_t staging_bytes) {
  const std::int64_t total = conversion.file_bytes();
  Staging staging(total, staging_bytes);
  for (std::int64_t from = 0; from < total; from += staging.chunk) {
    const std::int64_t length = std::min(staging.chunk, total - from);
    conversion.pack(from, length, staging.buffer.get());
    io::write_to_view(backend, fd, view, stream_position + from, staging.layout(length));
  }
  return total;
}

std::int64_t read_converted(io::StorageBackend& backend, int fd, const core::FileView& view,
                            std::int64_t stream_position, exchange::StreamConversion& conversion,
                            std::int64_t staging_bytes) {
  const std::int64_t total = conversion.file_bytes();
  Staging staging(total, staging_bytes);
  std::int64_t found = 0;
  for (std::int64_t from = 0; from < total; from += staging.chunk) {
    const std::int64_t length = std::min(staging.chunk, total - from);
    const std::int64_t got =
        io::read_from_view(backend, fd, view, stream_position + from, staging.layout(length));
    conversion.unpack(from, got, staging.buffer.get());
    found += got;
    if (got < length) break;  // end of file
  }
  return found;
}

}  // namespace flowio::runtime
