// Direct: in direct mode every process accesses its own part of the file
// itself (lock, io); also what the offsets stage moves at the call.
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "exchange/stream_pack.h"
#include "io/view_transfer.h"
#include "runtime/core/byte_order.h"
#include "runtime/engine/clock.h"
#include "runtime/stages/converted_transfer.h"
#include "runtime/stages/stage_support.h"
#include "runtime/stages/stages.h"

namespace flowio::runtime {
namespace {

// The staging chunk of a direct access whose memory is noncontiguous:
// ROMIO's ind_wr_buffer_size, which keeps the chunk in the cache between
// the packing and the system call.
constexpr std::int64_t kDirectStagingBytes = std::int64_t{512} << 10;
// The largest element whose conversion only reverses units
// (MPI_COMPLEX32: two 16-byte units).
constexpr std::int64_t kLargestReversedElement = 32;

// What a fill of reversed units reads from: `count` units of `unit` bytes
// at `from`.
struct Reversal {
  std::int64_t unit;
  const char* from;
  std::int64_t count;
};

template <void (*reverse)(std::int64_t, const char*, char*, std::int64_t)>
void fill_reversed(void* context, char* to) {
  const Reversal& r = *static_cast<const Reversal*>(context);
  reverse(r.unit, r.from, to, r.count);
}

// A write of contiguous memory whose conversion only reverses units, to
// ranges of the file of 64 KiB or more on average (one, or a checkpoint's
// blocks or rows of blocks), each whole units: reversed straight into the file's pages
// where the backend can (rewrites through the kept mapping), one pass as
// native's copy is, instead of converting into staging chunks and copying
// those (which made external32 half as fast as native once native rewrites
// went through the mapping, and 0.85 of native on bench/checkpoint's
// blocks of 32 MiB on 2 ranks, whose native writes are one pwrite each).
// False where it cannot: the caller then writes all of it again (some
// ranges may be in place already; they get the same bytes).
bool write_reversed_in_place(io::StorageBackend& backend, int fd,
                             const CollectiveRequest& request) {
  // Ranges shorter than this on average are small pieces, which the
  // staged path gathers better than a fill call each.
  constexpr std::int64_t kAverageRangeAtLeast = std::int64_t{64} << 10;
  const core::Access& access = request.access;
  const std::int64_t unit = request.conversion->reversed_unit();
  const std::int64_t bytes = access.bytes();
  // The estimate is an upper bound (twice the pieces of a vector view):
  // the ranges are counted where it leaves a doubt.
  const std::int64_t ranges_at_most = bytes / kAverageRangeAtLeast;
  if (unit <= 1 || bytes <= 0 || bytes % unit != 0 || !request.memory.contiguous() ||
      access.estimated_pieces() > 2 * ranges_at_most) {
    return false;
  }
  std::vector<core::Piece> ranges;
  bool whole_units = true;
  access.for_each_piece(access.file_begin(), access.file_end(), [&](const core::Piece& piece) {
    whole_units = whole_units && piece.length % unit == 0;
    ranges.push_back(piece);
  });
  if (!whole_units || static_cast<std::int64_t>(ranges.size()) > ranges_at_most) return false;
  // Too much to stay in the cache: stored around it (byte_order.h).
  const bool uncached = bytes >= core::kUncachedReversalFromBytes;
  Reversal reversal{unit, reinterpret_cast<const char*>(request.memory.address_of(0)), 0};
  void (*const fill)(void*, char*) =
      uncached ? fill_reversed<core::reverse_units_uncached> : fill_reversed<core::reverse_units>;
  // kFillInPlaceAtMostBytes is a whole number of units (a power of two).
  for (const core::Piece& range : ranges) {
    for (std::int64_t done = 0; done < range.length;) {
      const std::int64_t part = std::min(range.length - done, io::kFillInPlaceAtMostBytes);
      reversal.count = part / unit;
      if (!backend.fill_in_place(fd, range.offset + done, part, fill, &reversal)) return false;
      reversal.from += part;
      done += part;
    }
  }
  return true;
}

}  // namespace

// Atomic mode: a direct access locks this process's own bytes, and lets
// go before the agreement (another process's direct access may wait for
// them).
void direct_lock_stage(Operation& op, std::size_t, Next next) {
  enter_stage(op, "collective.direct_lock");
  const CollectiveRequest& request = op.request();
  if (request.atomic && !op.failed()) {
    op.guarded(
        [&] {
          op.phase<Moving>().lease_pending =
              request.atomic->lock_access(request.access, request.writing);
        },
        "direct_lock");
  }
  after_lease(op, std::move(next));
}

void direct_io_stage(Operation& op, std::size_t, Next next) {
  op.executor().run_io([&op, next = std::move(next)] {
    enter_stage(op, "collective.direct_io");
    Moving& moving = op.phase<Moving>();
    const CollectiveRequest& request = op.request();
    if (!op.failed()) {
      op.guarded(
          [&] {
            if (request.access.empty()) return;
            const std::int64_t begin = now_ns();
            const std::int64_t moved = move_own_part(op.file(), request);
            op.recorder().record(Stage::io, begin, -1, "", moved);
            op.recorder().add_method(Method::direct);
            if (!request.writing) moving.read_directly = moved;
            moving.accessed_directly = true;
          },
          "direct_io");
    }
    moving.lease.release();
    next();
  });
}

std::int64_t move_own_part(FileContext& context, const CollectiveRequest& request) {
  const core::Access& access = request.access;
  const core::MemoryLayout& memory = request.memory;
  const core::FileView& view = *access.view();
  io::StorageBackend& backend = context.backend();
  const int fd = context.file().get();
  const bool writing = request.writing;
  // Where independent writes may sieve, this write must not land in one's
  // extent between its read and its write back: it holds the sieve lock
  // over its own extent (io::WindowIoSettings::lock_every_write).
  io::SieveLock::Held extent;
  if (writing && !access.empty() && request.settings->window_io.lock_every_write) {
    extent = context.sieve_lock().lock(access.file_begin(), access.file_end());
  }
  std::int64_t moved = 0;
  // A conversion that only reverses units, with noncontiguous memory:
  // reversed in the gather into the staging chunk below (or the scatter
  // out of it), which native makes anyway, so it costs native's time plus
  // nothing measurable (6ba8c59:bench/README.md, external32). Handing 1 MiB chunks
  // to the workers cost a second pass and a wake-up per chunk, on cores
  // the ranks share.
  const std::int64_t staged_unit =
      request.conversion && !memory.contiguous() ? request.conversion->reversed_unit() : 0;
  if (writing && request.conversion && write_reversed_in_place(backend, fd, request)) {
    moved = access.bytes();
  } else if (request.conversion && staged_unit == 0) {
    // Data representation hook: converted by the workers, chunk by
    // chunk, while this thread moves the chunks converted before.
    tbb::task_arena& workers = context.workers();
    moved = writing ? write_converted(backend, fd, view, access.stream_begin(), *request.conversion,
                                      kConversionChunkBytes, workers)
                    : read_converted(backend, fd, view, access.stream_begin(), *request.conversion,
                                     kConversionChunkBytes, workers);
  } else if (memory.contiguous() && access.file_end() - access.file_begin() == access.bytes()) {
    // One piece in the file and in memory (the common small call): one
    // request, without walking the view.
    iovec buffer{reinterpret_cast<void*>(memory.address_of(0)),
                 static_cast<std::size_t>(access.bytes())};
    const io::IoRequest io_request{access.file_begin(), std::span<const iovec>(&buffer, 1),
                                   buffer.iov_len};
    if (writing) {
      backend.write(fd, std::span<const io::IoRequest>(&io_request, 1));
      moved = access.bytes();
    } else {
      std::size_t got = 0;
      backend.read(fd, std::span<const io::IoRequest>(&io_request, 1),
                   std::span<std::size_t>(&got, 1));
      moved = static_cast<std::int64_t>(got);
    }
  } else if (memory.contiguous()) {
    moved = writing ? io::write_to_view(backend, fd, view, access.stream_begin(), memory)
                    : io::read_from_view(backend, fd, view, access.stream_begin(), memory);
  } else {
    // Small memory pieces make slow iovecs: stage through a buffer,
    // packed or unpacked by memcpy, in chunks of at most
    // kDirectStagingBytes kept by the thread from call to call (a fresh
    // buffer of the whole access, 2 MiB for each of HDF5's collective
    // writes of bench/hdf5, cost a page fault per page every call).
    std::int64_t chunk =
        std::min({access.bytes(), request.settings->realms.window_bytes, kDirectStagingBytes});
    if (staged_unit > 0) {
      // A reversed conversion's stream has the memory's bytes (access.bytes()
      // counts both); a chunk holds whole units, and room for an element.
      chunk = std::max(kLargestReversedElement, chunk - chunk % staged_unit);
    }
    thread_local std::unique_ptr<char[]> kept_staging;
    if (!kept_staging) kept_staging = std::make_unique_for_overwrite<char[]>(kDirectStagingBytes);
    char* const staging = kept_staging.get();
    const core::FlatType bytes_type(core::make_run(1), 0, 1);
    for (std::int64_t from = 0; from < access.bytes();) {
      const std::int64_t length = std::min(chunk, access.bytes() - from);
      const core::MemoryLayout staged{&bytes_type, length, reinterpret_cast<std::int64_t>(staging)};
      if (writing) {
        if (staged_unit > 0) {
          exchange::pack_stream_reversing(memory, from, length, staged_unit, staging);
        } else {
          exchange::pack_stream(memory, from, length, staging);
        }
        moved += io::write_to_view(backend, fd, view, access.stream_begin() + from, staged);
        from += length;
        continue;
      }
      const std::int64_t got =
          io::read_from_view(backend, fd, view, access.stream_begin() + from, staged);
      if (staged_unit == 0) {
        exchange::unpack_stream(memory, from, got, staging);
        moved += got;
        from += length;
      } else {
        // Only whole elements reach memory (one that end of file cuts must
        // be left as it was); the next chunk starts at the element this
        // one cut, read again.
        const std::int64_t whole = request.conversion->memory_bytes_within(from + got);
        exchange::unpack_stream_reversing(memory, from, whole - from, staged_unit, staging);
        moved = from + got;
        from = whole;
      }
      if (got < length) break;  // end of file
    }
  }
  return moved;
}

}  // namespace flowio::runtime
