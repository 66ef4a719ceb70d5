// The io_uring storage backend: many requests in flight at once on a ring
// that belongs to the calling thread.
#pragma once

#include "io/posix_backend.h"
#include "io/storage_backend.h"
#include "io/uring_queue.h"

namespace flowio::io {

// Every method may be called from any number of threads at once: each
// thread submits to its own ring (created on its first call, destroyed when
// the thread exits), so calls never share submission state, unless the
// thread is routed to a UringQueue (route_this_thread), whose completions
// the progress engine reaps. Each call blocks its thread (sleeping, never
// spinning) until all its requests have completed, and returns only once
// the kernel no longer touches any iovec or buffer of the call, also when
// it throws.
//
// Up to ring_depth requests are in flight at once; short transfers are
// resubmitted for the remainder, and completions with -EAGAIN or -EINTR are
// resubmitted as they were (ring_transfer.h). After the first failure no
// new request is started; the call waits for those in flight, then throws
// IoError with the errno of the first failure it saw.
//
// A call with a single request, and every call where this thread's ring
// cannot be created (for example when the process is out of file
// descriptors), is served by PosixBackend instead.
class UringBackend final : public StorageBackend {
 public:
  // Entries of each thread's ring: how many requests one call keeps in
  // flight.
  static constexpr unsigned ring_depth = 256;

  // True when this kernel lets a ring be created and supports the read and
  // write operations used here. Probed once per process; thread safe.
  static bool available();

  // Makes the calling thread's calls go through `queue` instead of a ring
  // of its own (nullptr: back to its own), for a thread whose waits belong
  // to the progress engine: the runtime's I/O thread (runtime/engine/io_service.h).
  // A queue that is no longer usable() is passed by.
  static void route_this_thread(UringQueue* queue) noexcept;

  const char* name() const noexcept override { return "io_uring"; }

  void write(int fd, std::span<const IoRequest> requests) override;

  void read(int fd, std::span<const IoRequest> requests,
            std::span<std::size_t> bytes_read) override;

 private:
  PosixBackend fallback_;
};

}  // namespace flowio::io
