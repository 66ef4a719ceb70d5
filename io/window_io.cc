#include "io/window_io.h"

#include <algorithm>
#include <cstring>

#include "flowio/error.h"
#include "io/mapped_sieve.h"
#include "runtime/core/bulk_copy.h"
#include "runtime/core/value_names.h"

namespace flowio::io {
namespace {

// Linux accepts at most IOV_MAX (1024) iovecs per vectored call.
constexpr std::size_t kIovecsPerRequest = 1024;
// Below these mean piece lengths, a covered window is copied through the
// staging buffer and moved in one request: the kernel's per-iovec cost
// outweighs a memcpy. Above them the extra pass over memory costs more
// (reads cross over near 512-byte pieces). Writes keep staging up to
// larger pieces: their iovecs make one request per 1024 pieces, and
// through io_uring each buffered write is handed to a kernel worker and
// serialised with the other aggregators' writes on the file's lock. The
// measurements behind both thresholds are in the commits that set them
// (git log -S kStageWritesBelowPieceBytes).
constexpr std::int64_t kStageWritesBelowPieceBytes = 65536;
constexpr std::int64_t kStageReadsBelowPieceBytes = 512;

struct Shape {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t data = 0;
  bool covered = true;  // no byte of [begin, end) lies outside every piece
};

// Pieces of different clients may overlap (reads of the same bytes): the
// extent ends at the farthest end, not at the last piece's, and a window
// is covered only when no gap lies between the pieces, whatever their sum.
Shape shape_of(std::span<const WindowPiece> pieces) {
  Shape shape{pieces.front().offset, pieces.front().offset, 0, true};
  for (const WindowPiece& piece : pieces) {
    shape.data += piece.length;
    if (piece.offset > shape.end) shape.covered = false;
    shape.end = std::max(shape.end, piece.offset + piece.length);
  }
  return shape;
}

WindowMethod choose(const Shape& shape, std::size_t piece_count, const WindowIoSettings& settings) {
  if (shape.covered) return WindowMethod::contiguous;
  if (!settings.file_readable) return WindowMethod::vectored;
  switch (settings.sieve) {
    case SieveMode::enable:
      return WindowMethod::sieve;
    case SieveMode::disable:
      return WindowMethod::vectored;
    case SieveMode::automatic:
      break;
  }
  const std::int64_t mean_distance =
      (shape.end - shape.begin) / static_cast<std::int64_t>(piece_count);
  return mean_distance < settings.sieve_threshold ? WindowMethod::sieve : WindowMethod::vectored;
}

// What one window's I/O will do: the method, and for a covered window
// whether its pieces are small enough to go through the staging buffer
// rather than as iovecs.
struct Plan {
  Shape shape;
  WindowMethod method;
  bool staged;
  // Sieving through a mapping is worth trying: a sieved window, or a
  // vectored one whose pieces are close enough for a mapping to beat one
  // request per piece.
  bool try_mapping;
};

Plan plan_window(std::span<const WindowPiece> pieces, const WindowIoSettings& settings,
                 bool writing) {
  Plan plan{shape_of(pieces), WindowMethod::none, false, false};
  plan.method = choose(plan.shape, pieces.size(), settings);
  const Shape& shape = plan.shape;
  const bool close_enough = settings.sieve == SieveMode::automatic &&
                            shape.end - shape.begin < settings.mapped_threshold *
                                                          static_cast<std::int64_t>(pieces.size());
  const bool candidate =
      plan.method == WindowMethod::sieve || (plan.method == WindowMethod::vectored && close_enough);
  plan.try_mapping =
      candidate && settings.file_readable &&
      (settings.mapping == SieveMode::enable ||
       (settings.mapping == SieveMode::automatic && shape.end - shape.begin >= kMapAtLeastBytes));
  plan.staged =
      plan.method == WindowMethod::contiguous &&
      plan.shape.data < (writing ? kStageWritesBelowPieceBytes : kStageReadsBelowPieceBytes) *
                            static_cast<std::int64_t>(pieces.size());
  return plan;
}

// Requests for runs of touching pieces, their iovecs pointing at the
// pieces' memory.
struct RequestList {
  std::vector<iovec> iovecs;
  std::vector<IoRequest> requests;

  explicit RequestList(std::span<const WindowPiece> pieces) {
    iovecs.reserve(pieces.size());
    struct Run {
      std::int64_t offset;
      std::size_t first;
      std::size_t bytes;
    };
    std::vector<Run> runs;
    for (const WindowPiece& piece : pieces) {
      const bool extends =
          !runs.empty() &&
          runs.back().offset + static_cast<std::int64_t>(runs.back().bytes) == piece.offset &&
          iovecs.size() - runs.back().first < kIovecsPerRequest;
      if (!extends) runs.push_back(Run{piece.offset, iovecs.size(), 0});
      iovecs.push_back(iovec{piece.data, static_cast<std::size_t>(piece.length)});
      runs.back().bytes += static_cast<std::size_t>(piece.length);
    }
    requests.reserve(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::size_t last = i + 1 < runs.size() ? runs[i + 1].first : iovecs.size();
      requests.push_back(
          IoRequest{runs[i].offset,
                    std::span<const iovec>(iovecs.data() + runs[i].first, last - runs[i].first),
                    runs[i].bytes});
    }
  }
};

// Pieces whose bytes change on their way to the file (WindowPiece::
// reversed_unit) go through the first this many bytes of the staging
// buffer, converted there a piece of it at a time and written from there
// while still in cache (the L2 cache is 1 MiB here): converting the whole
// window first would be one more pass over memory.
constexpr std::int64_t kConvertThroughBytes = 256 * 1024;

bool any_converted(std::span<const WindowPiece> pieces) {
  return std::any_of(pieces.begin(), pieces.end(),
                     [](const WindowPiece& piece) { return piece.reversed_unit > 1; });
}

// Writes the pieces in file form through `staging`: touching pieces fill
// it together, one request per kConvertThroughBytes or less. Returns the
// requests issued.
std::int64_t write_converted(StorageBackend& backend, int fd, std::span<const WindowPiece> pieces,
                             std::vector<char>& staging) {
  if (staging.size() < static_cast<std::size_t>(kConvertThroughBytes)) {
    staging.resize(static_cast<std::size_t>(kConvertThroughBytes));
  }
  std::int64_t requests = 0;
  std::int64_t start = 0;
  std::int64_t filled = 0;
  const auto flush = [&] {
    if (filled == 0) return;
    const iovec memory{staging.data(), static_cast<std::size_t>(filled)};
    const IoRequest request{start, std::span<const iovec>(&memory, 1),
                            static_cast<std::size_t>(filled)};
    backend.write(fd, std::span<const IoRequest>(&request, 1));
    ++requests;
    filled = 0;
  };
  for (const WindowPiece& piece : pieces) {
    for (std::int64_t done = 0; done < piece.length;) {
      if (filled == kConvertThroughBytes || (filled > 0 && start + filled != piece.offset + done)) {
        flush();
      }
      if (filled == 0) start = piece.offset + done;
      const std::int64_t bytes = std::min(piece.length - done, kConvertThroughBytes - filled);
      copy_to_file_form(piece, done, bytes, staging.data() + filled);
      filled += bytes;
      done += bytes;
    }
  }
  flush();
  return requests;
}

// Every piece of a covered window, in file form, made straight in the
// file's pages by the backend (StorageBackend::fill_in_place); false
// where it cannot, nothing to rely on written.
bool fill_window_in_place(StorageBackend& backend, int fd, std::span<const WindowPiece> pieces,
                          const Shape& shape) {
  const std::int64_t extent = shape.end - shape.begin;
  if (extent > kFillInPlaceAtMostBytes) return false;
  struct Window {
    std::span<const WindowPiece> pieces;
    std::int64_t begin;
  } window{pieces, shape.begin};
  return backend.fill_in_place(
      fd, shape.begin, extent,
      [](void* context, char* to) {
        const Window& w = *static_cast<const Window*>(context);
        copy_pieces_to_file_form(w.pieces, [to, begin = w.begin](const WindowPiece& piece) {
          return to + (piece.offset - begin);
        });
      },
      &window);
}

constexpr core::ValueName<SieveMode> kSieveModeNames[] = {{SieveMode::automatic, "automatic"},
                                                          {SieveMode::enable, "enable"},
                                                          {SieveMode::disable, "disable"}};

constexpr core::ValueName<WindowMethod> kWindowMethodNames[] = {
    {WindowMethod::none, "none"},
    {WindowMethod::contiguous, "contiguous"},
    {WindowMethod::sieve, "sieve"},
    {WindowMethod::mapped, "mapped"},
    {WindowMethod::vectored, "vectored"}};

// Reads [begin, end) into staging; bytes past end of file read as zero.
// Returns the bytes that lay before end of file.
std::int64_t read_extent(StorageBackend& backend, int fd, const Shape& shape,
                         std::vector<char>& staging) {
  const std::size_t extent = static_cast<std::size_t>(shape.end - shape.begin);
  if (staging.size() < extent) staging.resize(extent);
  const iovec whole{staging.data(), extent};
  const IoRequest request{shape.begin, std::span<const iovec>(&whole, 1), extent};
  std::size_t got = 0;
  backend.read(fd, std::span<const IoRequest>(&request, 1), std::span<std::size_t>(&got, 1));
  std::memset(staging.data() + got, 0, extent - got);
  return static_cast<std::int64_t>(got);
}

}  // namespace

SieveMode parse_sieve_mode(const std::string& text) {
  return core::value_named(kSieveModeNames, text, "data sieving hint");
}

const char* window_method_name(WindowMethod method) {
  return core::name_of(kWindowMethodNames, method);
}

WindowIoResult write_window(StorageBackend& backend, int fd, std::span<const WindowPiece> pieces,
                            const WindowIoSettings& settings, std::vector<char>& staging,
                            SieveLock* sieve_lock) {
  WindowIoResult result;
  if (pieces.empty()) return result;
  const Plan plan = plan_window(pieces, settings, true);
  const Shape& shape = plan.shape;
  const bool stage_covered = plan.staged;
  result.method = plan.method;
  // Held from the read of the holes to their write back, so that nobody
  // else writes them meanwhile; and, with lock_every_write, around any
  // write, so that it never falls inside an independent sieving write's
  // extent between that one's read and write. Where the file system has no
  // lock, the pieces go one by one.
  SieveLock::Held extent;
  if (sieve_lock != nullptr &&
      (settings.lock_every_write || result.method == WindowMethod::sieve)) {
    extent = sieve_lock->lock(shape.begin, shape.end);
    if (!extent && result.method == WindowMethod::sieve) result.method = WindowMethod::vectored;
  }
  // automatic: mapped only where mostly cached; enable: wherever it can be.
  // Stores through the mapping change only the bytes stored.
  if (plan.try_mapping && write_mapped(fd, pieces, settings.mapping == SieveMode::automatic)) {
    result.method = WindowMethod::mapped;
    result.requests = 1;
    result.file_bytes = shape.data;
    return result;
  }
  // A covered window that would otherwise take two passes over its bytes
  // (small pieces gathered into the staging buffer, or converted pieces
  // converted into it) and then a copy into the page cache: its pieces go
  // straight into the file's pages where the backend can (a rewrite
  // through the kept mapping), converted on the way. One pass: bench/
  // checkpoint's external32 windows on 4 ranks (rows of 103 KiB, reversed)
  // went from 0.84-0.89 of native's speed to 0.92-0.98.
  if (result.method == WindowMethod::contiguous && (stage_covered || any_converted(pieces)) &&
      fill_window_in_place(backend, fd, pieces, shape)) {
    result.requests = 1;
    result.file_bytes = shape.data;
    return result;
  }
  if (result.method == WindowMethod::sieve || stage_covered) {
    const std::size_t extent = static_cast<std::size_t>(shape.end - shape.begin);
    if (stage_covered) {
      if (staging.size() < extent) staging.resize(extent);
    } else {
      read_extent(backend, fd, shape, staging);
    }
    char* const base = staging.data();
    copy_pieces_to_file_form(pieces, [base, begin = shape.begin](const WindowPiece& piece) {
      return base + (piece.offset - begin);
    });
    const iovec whole{staging.data(), extent};
    const IoRequest request{shape.begin, std::span<const iovec>(&whole, 1), extent};
    backend.write(fd, std::span<const IoRequest>(&request, 1));
    result.requests = stage_covered ? 1 : 2;
    result.file_bytes = (stage_covered ? 1 : 2) * static_cast<std::int64_t>(extent);
    return result;
  }
  result.file_bytes = shape.data;
  if (any_converted(pieces)) {
    result.requests = write_converted(backend, fd, pieces, staging);
    return result;
  }
  const RequestList list(pieces);
  backend.write(fd, list.requests);
  result.requests = static_cast<std::int64_t>(list.requests.size());
  return result;
}

WindowIoResult read_window(StorageBackend& backend, int fd, std::span<const WindowPiece> pieces,
                           const WindowIoSettings& settings, std::vector<char>& staging) {
  WindowIoResult result;
  if (pieces.empty()) return result;
  const Plan plan = plan_window(pieces, settings, false);
  const Shape& shape = plan.shape;
  const bool stage_covered = plan.staged;
  result.method = plan.method;
  result.data_end = shape.end;
  const auto count_before = [&](std::int64_t end) {
    result.data_end = std::min(result.data_end, end);
    for (const WindowPiece& piece : pieces) {
      result.bytes_read += std::clamp<std::int64_t>(end - piece.offset, 0, piece.length);
    }
  };
  if (plan.try_mapping) {
    if (const std::optional<std::int64_t> end =
            read_mapped(fd, pieces, settings.mapping == SieveMode::automatic)) {
      result.method = WindowMethod::mapped;
      result.requests = 1;
      count_before(*end);
      result.file_bytes = result.bytes_read;
      return result;
    }
  }
  if (result.method == WindowMethod::sieve || stage_covered) {
    const std::int64_t valid = read_extent(backend, fd, shape, staging);
    result.data_end = shape.begin + valid;
    for (const WindowPiece& piece : pieces) {
      core::copy_bytes(piece.data, staging.data() + (piece.offset - shape.begin),
                       static_cast<std::size_t>(piece.length));
      const std::int64_t before_end = shape.begin + valid - piece.offset;
      result.bytes_read += std::clamp<std::int64_t>(before_end, 0, piece.length);
    }
    result.requests = 1;
    result.file_bytes = stage_covered ? valid : shape.end - shape.begin;
    return result;
  }
  const RequestList list(pieces);
  std::vector<std::size_t> got(list.requests.size());
  backend.read(fd, list.requests, got);
  // Zero what lay past end of file, so that no stale bytes travel.
  for (std::size_t r = 0; r < list.requests.size(); ++r) {
    result.bytes_read += static_cast<std::int64_t>(got[r]);
    if (got[r] < list.requests[r].bytes) {
      result.data_end = std::min(result.data_end,
                                 list.requests[r].file_offset + static_cast<std::int64_t>(got[r]));
    }
    std::size_t skip = got[r];
    for (const iovec& piece : list.requests[r].memory) {
      const std::size_t keep = std::min(skip, piece.iov_len);
      std::memset(static_cast<char*>(piece.iov_base) + keep, 0, piece.iov_len - keep);
      skip -= keep;
    }
  }
  result.requests = static_cast<std::int64_t>(list.requests.size());
  result.file_bytes = result.bytes_read;
  return result;
}

}  // namespace flowio::io
