#include "io/view_transfer.h"

#include <sys/uio.h>

#include <algorithm>
#include <vector>

namespace flowio::io {
namespace {

// Pieces per batch: enough to amortize a submission, small enough to keep
// the iovec and request arrays in cache-sized memory.
constexpr std::size_t kPiecesPerBatch = 4096;
constexpr std::size_t kFirstBatchPieces = 64;
// Bytes per batch bound the memory a batch pins, not copies: nothing is
// staged, the iovecs point into the caller's buffer.
constexpr std::int64_t kBytesPerBatch = std::int64_t{256} << 20;
// Linux accepts at most IOV_MAX (1024) iovecs per vectored call.
constexpr std::size_t kIovecsPerRequest = 1024;

// Pairs the file pieces of a view with the memory pieces of a buffer, one
// batch of requests at a time.
class RequestBatcher {
 public:
  RequestBatcher(const core::FileView& view, std::int64_t stream_position,
                 const core::MemoryLayout& memory)
      : file_(view.file_pieces(stream_position)),
        memory_(*memory.type, memory.count, memory.buffer_address),
        remaining_(memory.bytes()) {
    // Small first: most transfers have few pieces, and a full batch array
    // costs more to allocate than their I/O. Grown by next() as needed.
    file_pieces_.resize(kFirstBatchPieces);
  }

  bool done() const { return remaining_ == 0; }

  // Builds the next batch; the returned requests point into this object
  // and stay valid until the next call.
  std::span<const IoRequest> next() {
    const std::size_t piece_count = file_.next(file_pieces_, std::min(remaining_, kBytesPerBatch));
    if (piece_count == file_pieces_.size() && file_pieces_.size() < kPiecesPerBatch) {
      file_pieces_.resize(std::min(kPiecesPerBatch, 8 * file_pieces_.size()));
    }
    iovecs_.clear();
    struct Pending {
      std::int64_t file_offset;
      std::size_t first_iovec;
      std::size_t iovec_count;
      std::size_t bytes;
    };
    std::vector<Pending> pending;
    pending.reserve(piece_count);
    for (std::size_t i = 0; i < piece_count; ++i) {
      std::int64_t file_offset = file_pieces_[i].offset;
      std::int64_t need = file_pieces_[i].length;
      Pending current{file_offset, iovecs_.size(), 0, 0};
      while (need > 0) {
        core::Piece piece;
        memory_.next_piece(piece, need);
        iovecs_.push_back(
            iovec{reinterpret_cast<void*>(piece.offset), static_cast<std::size_t>(piece.length)});
        ++current.iovec_count;
        current.bytes += static_cast<std::size_t>(piece.length);
        need -= piece.length;
        file_offset += piece.length;
        if (current.iovec_count == kIovecsPerRequest && need > 0) {
          pending.push_back(current);
          current = Pending{file_offset, iovecs_.size(), 0, 0};
        }
      }
      pending.push_back(current);
      remaining_ -= file_pieces_[i].length;
    }
    // iovecs_ no longer grows: spans into it are now stable.
    requests_.clear();
    for (const Pending& p : pending) {
      requests_.push_back(IoRequest{
          p.file_offset, std::span<const iovec>(iovecs_.data() + p.first_iovec, p.iovec_count),
          p.bytes});
    }
    return requests_;
  }

 private:
  core::PieceCursor file_;
  core::PieceCursor memory_;
  std::int64_t remaining_;
  std::vector<core::Piece> file_pieces_;
  std::vector<iovec> iovecs_;
  std::vector<IoRequest> requests_;
};

// The one request of an access that is contiguous in memory and in a
// contiguous view (the default view), or nothing. It needs no cursor and
// no allocation: the common small call is one system call.
struct SingleRequest {
  iovec memory;
  IoRequest request;
};

bool single_request(const core::FileView& view, std::int64_t stream_position,
                    const core::MemoryLayout& memory, SingleRequest& out) {
  if (!view.is_contiguous() || !memory.contiguous()) return false;
  const auto bytes = static_cast<std::size_t>(memory.bytes());
  out.memory = iovec{reinterpret_cast<void*>(memory.address_of(0)), bytes};
  out.request = IoRequest{view.displacement() + view.filetype().true_lb() + stream_position,
                          std::span<const iovec>(&out.memory, 1), bytes};
  return true;
}

}  // namespace

std::int64_t write_to_view(StorageBackend& backend, int fd, const core::FileView& view,
                           std::int64_t stream_position, const core::MemoryLayout& memory) {
  if (memory.bytes() == 0) return 0;
  if (SingleRequest single; single_request(view, stream_position, memory, single)) {
    backend.write(fd, std::span<const IoRequest>(&single.request, 1));
    return memory.bytes();
  }
  RequestBatcher batcher(view, stream_position, memory);
  while (!batcher.done()) backend.write(fd, batcher.next());
  return memory.bytes();
}

std::int64_t read_from_view(StorageBackend& backend, int fd, const core::FileView& view,
                            std::int64_t stream_position, const core::MemoryLayout& memory) {
  if (memory.bytes() == 0) return 0;
  if (SingleRequest single; single_request(view, stream_position, memory, single)) {
    std::size_t got = 0;
    backend.read(fd, std::span<const IoRequest>(&single.request, 1),
                 std::span<std::size_t>(&got, 1));
    return static_cast<std::int64_t>(got);
  }
  RequestBatcher batcher(view, stream_position, memory);
  std::int64_t total = 0;
  std::vector<std::size_t> bytes_read;
  while (!batcher.done()) {
    std::span<const IoRequest> requests = batcher.next();
    bytes_read.assign(requests.size(), 0);
    backend.read(fd, requests, bytes_read);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      total += static_cast<std::int64_t>(bytes_read[i]);
      // The view is monotone: once a request ends early, the file ended.
      if (bytes_read[i] < requests[i].bytes) return total;
    }
  }
  return total;
}

}  // namespace flowio::io
