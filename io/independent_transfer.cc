#include "io/independent_transfer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

#include "flowio/error.h"
#include "io/file_descriptor.h"
#include "io/view_transfer.h"

namespace flowio::io {
namespace {

// A batch is bounded in pieces (the piece list's memory) and in extent
// (WindowIoSettings::independent_batch_bytes: the staging buffer a sieved
// read or a staged covered write needs).
constexpr std::size_t kBatchPieces = 65536;
// A write that may rewrite its extent is sieved in batches of at most
// this extent: the staging buffer then stays in the cache between the
// read, the copies into it and the write back (2 MiB batches ran at half
// the speed of ROMIO's 512 KiB ones, bench/locks --view=strided).
constexpr std::int64_t kRewriteBatchExtent = std::int64_t{512} << 10;
// File pieces are pulled from the view's cursor this many at a time.
constexpr std::size_t kCursorChunk = 1024;

// Per-thread buffers, reused from call to call: a sieved read or a staged
// write of a 16 MiB extent would otherwise fault in fresh pages every
// time. Bounded by one batch (16 MiB of staging by default, 65536 pieces).
struct Scratch {
  std::vector<WindowPiece> pieces;
  std::vector<char> staging;
};
thread_local Scratch scratch;

// Pairs the file pieces of a view with the memory of a buffer, one batch
// of WindowPieces at a time (split wherever a memory piece ends).
class PieceBatcher {
 public:
  PieceBatcher(const core::FileView& view, std::int64_t stream_position,
               const core::MemoryLayout& memory, std::int64_t batch_extent)
      : batch_extent_(batch_extent),
        file_(view.file_pieces(stream_position)),
        unpulled_(memory.bytes()),
        remaining_(memory.bytes()) {
    if (memory.contiguous()) {
      contiguous_address_ = memory.address_of(0);
    } else {
      memory_.emplace(*memory.type, memory.count, memory.buffer_address);
    }
  }

  // Fills `out` with the next batch; false when the stream is done.
  // `data` receives the batch's bytes.
  bool next(std::vector<WindowPiece>& out, std::int64_t& data) {
    out.clear();
    data = 0;
    while (remaining_ > 0 && out.size() < kBatchPieces) {
      if (index_ == pending_.size() && !pull()) break;
      const core::Piece piece = pending_[index_];
      if (!out.empty() && piece.offset + piece.length - out.front().offset > batch_extent_) break;
      ++index_;
      remaining_ -= piece.length;
      data += piece.length;
      add(piece, out);
    }
    return !out.empty();
  }

 private:
  // False when the view has no more pieces (never, for a view with data:
  // its stream has no end).
  bool pull() {
    pending_.resize(kCursorChunk);
    pending_.resize(file_.next(pending_, unpulled_));
    for (const core::Piece& piece : pending_) unpulled_ -= piece.length;
    index_ = 0;
    return !pending_.empty();
  }

  void add(const core::Piece& piece, std::vector<WindowPiece>& out) {
    if (!memory_) {
      out.push_back(WindowPiece{piece.offset, piece.length,
                                reinterpret_cast<char*>(contiguous_address_ + consumed_)});
      consumed_ += piece.length;
      return;
    }
    std::int64_t offset = piece.offset;
    for (std::int64_t need = piece.length; need > 0;) {
      core::Piece in_memory;
      memory_->next_piece(in_memory, need);
      out.push_back(
          WindowPiece{offset, in_memory.length, reinterpret_cast<char*>(in_memory.offset)});
      offset += in_memory.length;
      need -= in_memory.length;
    }
  }

  std::int64_t batch_extent_;
  core::PieceCursor file_;
  std::optional<core::PieceCursor> memory_;  // unless the memory is contiguous
  std::int64_t contiguous_address_ = 0;
  std::int64_t consumed_ = 0;  // contiguous memory: stream bytes placed so far
  std::int64_t unpulled_;      // stream bytes not yet taken from file_
  std::int64_t remaining_;     // stream bytes not yet placed in a batch
  std::vector<core::Piece> pending_;
  std::size_t index_ = 0;
};

struct Shape {
  std::int64_t extent = 0;
  std::int64_t data = 0;
};

Shape shape_of(const std::vector<WindowPiece>& pieces, std::int64_t data) {
  return Shape{pieces.back().offset + pieces.back().length - pieces.front().offset, data};
}

// Whether a mapping should serve a batch of this shape: it has holes (a
// covered batch is one request), the hints allow sieving and mapping, and
// its pieces are close enough for page faults to cost less than one
// request per piece.
bool worth_mapping(const Shape& shape, std::size_t pieces, const WindowIoSettings& settings) {
  return shape.data < shape.extent && settings.sieve != SieveMode::disable &&
         settings.mapping != SieveMode::disable &&
         shape.extent < settings.mapped_threshold * static_cast<std::int64_t>(pieces);
}

// Whether a write allowed to rewrite its extent should sieve a batch of
// this shape: it has holes, the file may be read, and the hints ask for
// sieving, or leave it to the rule of window I/O (window_io.h): pieces
// closer than sieve_threshold on average. That rule is the ratio of data
// to extent that matters: a batch of many small pieces (8 bytes every 128)
// is mostly holes, yet reading and writing back its extent costs two
// system calls where one request per piece costs hundreds; a batch of few
// pieces far apart (1 KiB every 64 KiB) would move 64 times its data, and
// goes by the mapping or one request per piece instead.
bool worth_sieving(const Shape& shape, std::size_t pieces, const WindowIoSettings& settings) {
  if (shape.data == shape.extent || !settings.file_readable) return false;
  switch (settings.sieve) {
    case SieveMode::enable:
      return true;
    case SieveMode::disable:
      return false;
    case SieveMode::automatic:
      break;
  }
  return shape.extent < settings.sieve_threshold * static_cast<std::int64_t>(pieces);
}

// Drops the pieces at or past `size` and shortens the one across it,
// keeping `data` (the pieces' bytes) right. Returns true when anything was
// cut. The pieces are sorted: the first at or past `size` is found by
// binary search, and a batch inside the file costs one comparison.
bool clip_at(std::int64_t size, std::vector<WindowPiece>& pieces, std::int64_t& data) {
  if (pieces.back().offset + pieces.back().length <= size) return false;
  const auto past = std::partition_point(pieces.begin(), pieces.end(),
                                         [size](const WindowPiece& p) { return p.offset < size; });
  for (auto piece = past; piece != pieces.end(); ++piece) data -= piece->length;
  pieces.erase(past, pieces.end());
  if (!pieces.empty() && pieces.back().offset + pieces.back().length > size) {
    data -= pieces.back().offset + pieces.back().length - size;
    pieces.back().length = size - pieces.back().offset;
  }
  return true;
}

std::int64_t file_size(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    throw_errno(errno, "fstat of " + describe_fd(fd) + " before a noncontiguous read");
  return info.st_size;
}

}  // namespace

std::int64_t write_independent(StorageBackend& backend, int fd, FileMapping& mapping,
                               const core::FileView& view, std::int64_t stream_position,
                               const core::MemoryLayout& memory, const WindowIoSettings& settings,
                               bool may_rewrite_extent) {
  if (memory.bytes() == 0) return 0;
  if (view.is_contiguous() && memory.contiguous()) {
    return write_to_view(backend, fd, view, stream_position, memory);
  }
  // Without the caller's word, never read-modify-write (see the header):
  // covered batches go as one request, the others vectored.
  WindowIoSettings without_sieving = settings;
  without_sieving.sieve = SieveMode::disable;
  without_sieving.mapping = SieveMode::disable;
  PieceBatcher batcher(view, stream_position, memory,
                       may_rewrite_extent
                           ? std::min(kRewriteBatchExtent, settings.independent_batch_bytes)
                           : settings.independent_batch_bytes);
  std::vector<WindowPiece>& pieces = scratch.pieces;
  std::int64_t data = 0;
  while (batcher.next(pieces, data)) {
    const Shape shape = shape_of(pieces, data);
    // The caller keeps other writers out of the extent (no sieve lock
    // here): pieces close together are sieved, as a window is. A part of
    // the file accessed before (rewrites of the same part, as time steps
    // and HDF5 make) is stored through the kept mapping instead: from the
    // second time on its pages are mapped, and stores cost only their
    // copies, where sieving reads and writes the whole extent every time
    // (the first time, a page fault per page costs more than sieving).
    if (may_rewrite_extent && worth_sieving(shape, pieces.size(), settings)) {
      const std::int64_t begin = pieces.front().offset;
      const std::int64_t end = begin + shape.extent;
      if (mapping.accessed_before(begin, end) && worth_mapping(shape, pieces.size(), settings) &&
          mapping.store(pieces)) {
        continue;
      }
      write_window(backend, fd, pieces, settings, scratch.staging, nullptr);
      mapping.note_access(begin, end);
      continue;
    }
    if (worth_mapping(shape, pieces.size(), settings) && mapping.store(pieces)) continue;
    write_window(backend, fd, pieces, without_sieving, scratch.staging, nullptr);
  }
  return memory.bytes();
}

std::int64_t read_independent(StorageBackend& backend, int fd, FileMapping& mapping,
                              const core::FileView& view, std::int64_t stream_position,
                              const core::MemoryLayout& memory, const WindowIoSettings& settings) {
  if (memory.bytes() == 0) return 0;
  if (view.is_contiguous() && memory.contiguous()) {
    return read_from_view(backend, fd, view, stream_position, memory);
  }
  // The kept mapping serves mapped reads; a mapping made per batch (what
  // window I/O would do) would fault the pages in again every call.
  WindowIoSettings without_mapping = settings;
  without_mapping.mapping = SieveMode::disable;
  const std::int64_t size = file_size(fd);
  PieceBatcher batcher(view, stream_position, memory, settings.independent_batch_bytes);
  std::vector<WindowPiece>& pieces = scratch.pieces;
  std::int64_t total = 0;
  std::int64_t data = 0;
  while (batcher.next(pieces, data)) {
    const bool cut = clip_at(size, pieces, data);
    if (pieces.empty()) break;
    const Shape shape = shape_of(pieces, data);
    std::optional<std::int64_t> loaded;
    if (worth_mapping(shape, pieces.size(), settings)) loaded = mapping.load(pieces);
    const std::int64_t got =
        loaded ? *loaded
               : read_window(backend, fd, pieces, without_mapping, scratch.staging).bytes_read;
    total += got;
    // The view is monotone: once a batch ends early, the file ended.
    if (cut || got < shape.data) break;
  }
  return total;
}

}  // namespace flowio::io
