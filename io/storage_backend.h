// The storage backend interface: moves bytes between memory and a file
// descriptor, many file ranges per call. Implementations: io_uring
// (uring_backend.h) and POSIX pread/pwrite (posix_backend.h).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace flowio::io {

// One contiguous range of the file, [file_offset, file_offset + bytes),
// moved from or to the memory pieces `memory` in order. `bytes` is the sum
// of the iovec lengths. The iovecs and the memory they point to are borrowed
// until the backend call that receives the request returns.
struct IoRequest {
  std::int64_t file_offset = 0;
  std::span<const iovec> memory;
  std::size_t bytes = 0;
};

// The most bytes one fill_in_place call may ask for; larger fills are
// made of several calls.
inline constexpr std::int64_t kFillInPlaceAtMostBytes = std::int64_t{16} << 20;

// Thread safety: every method may be called from many threads at once.
class StorageBackend {
 public:
  virtual ~StorageBackend() = default;

  // "io_uring" or "posix".
  virtual const char* name() const noexcept = 0;

  // Writes every request completely: short writes are continued. The
  // requests must not overlap each other; they may complete in any order.
  // Throws IoError carrying the errno of the first failure. After a
  // failure, some requests may have been written and others not.
  virtual void write(int fd, std::span<const IoRequest> requests) = 0;

  // Reads every request; short reads are continued until end of file.
  // bytes_read[i] receives the bytes read for requests[i] (less than
  // requests[i].bytes only where the file ends inside the request). Memory
  // past end of file is left untouched. Throws IoError carrying the errno of
  // the first failure.
  virtual void read(int fd, std::span<const IoRequest> requests,
                    std::span<std::size_t> bytes_read) = 0;

  // Writes [offset, offset + bytes) of `fd` by letting `fill(context, to)`
  // make the bytes straight in the file's pages, where this backend can
  // (mapped_backend.h: a kept mapping of a range accessed before, at most
  // kFillInPlaceAtMostBytes a call). Returns false where it cannot, or
  // when a page failed midway: the caller then writes the whole range
  // through write(). `fill` must be plain loops (it may be left by
  // siglongjmp, bus_guard.h).
  virtual bool fill_in_place(int /*fd*/, std::int64_t /*offset*/, std::int64_t /*bytes*/,
                             void (* /*fill*/)(void*, char*), void* /*context*/) {
    return false;
  }
};

enum class BackendKind { automatic, io_uring, posix };

// A backend of flowio's own over the one chosen (mapped_backend.h).
using BackendLayer =
    std::function<std::unique_ptr<StorageBackend>(std::unique_ptr<StorageBackend>)>;

// Chooses and creates a backend. `automatic` takes io_uring when this
// kernel lets a ring be created and POSIX otherwise; the environment
// variable FLOWIO_IO_BACKEND=posix (or =io_uring) overrides `automatic`.
// Asking for io_uring explicitly where the kernel refuses it throws
// UsageError(unsupported). `layer`, if given, is put over the chosen
// backend, under a test's wrapper (set_backend_wrapper), so that injected
// faults reach the calls the layer would serve itself.
std::unique_ptr<StorageBackend> make_storage_backend(BackendKind kind = BackendKind::automatic,
                                                     const BackendLayer& layer = {});

// A test program's hook around every backend make_storage_backend creates:
// test-only code (io/fault_injection.h) installs one to inject faults;
// nothing installs one in a release program. Install it before opening
// files (it is read without a lock; nullptr removes it).
using BackendWrapper = std::unique_ptr<StorageBackend> (*)(std::unique_ptr<StorageBackend>);
void set_backend_wrapper(BackendWrapper wrapper) noexcept;

// Parses a hint value: "auto", "io_uring" or "posix". Throws UsageError on
// anything else.
BackendKind parse_backend_kind(const std::string& text);

// Checks what every backend receives, before any I/O starts: offsets not
// negative, each range ending before the largest off_t, and `bytes` equal to
// the sum of the iovec lengths. Throws UsageError(invalid_argument).
void check_requests(std::span<const IoRequest> requests);

// check_requests, and room in `bytes_read` for a count per request (else
// UsageError(invalid_count)).
void check_read_requests(std::span<const IoRequest> requests,
                         std::span<const std::size_t> bytes_read);

}  // namespace flowio::io
