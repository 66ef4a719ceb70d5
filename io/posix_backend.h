// The POSIX storage backend: one pwritev/preadv (pwrite/pread for a single
// iovec) after another, on the calling thread. Works on every kernel and
// file system; the io_uring backend falls back to it.
#pragma once

#include "io/storage_backend.h"

namespace flowio::io {

// Stateless: every method may be called from any number of threads at once.
// Each call blocks its thread until all its requests are done or one fails.
// Short transfers are continued from where they stopped, and calls
// interrupted by a signal (EINTR) are repeated. The requests are worked
// through in order; a failure stops the call, so the requests after it are
// not started.
class PosixBackend final : public StorageBackend {
 public:
  const char* name() const noexcept override { return "posix"; }

  void write(int fd, std::span<const IoRequest> requests) override;

  void read(int fd, std::span<const IoRequest> requests,
            std::span<std::size_t> bytes_read) override;
};

}  // namespace flowio::io
