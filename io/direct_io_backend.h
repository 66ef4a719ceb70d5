// DirectIoBackend: sends the requests that O_DIRECT can take (file offset,
// length and every memory piece aligned to the block size) to a second
// descriptor of the same file opened with O_DIRECT, and the rest through
// the page cache. Direct requests move by DMA from the caller's memory:
// the CPU copies nothing, so a durable write is bound by the device and a
// program can compute meanwhile. Linux keeps the two paths coherent (a
// direct write invalidates the cached pages it covers).
#pragma once

#include <cstddef>
#include <memory>

#include "io/storage_backend.h"

namespace flowio::io {

class DirectIoBackend : public StorageBackend {
 public:
  // `direct_fd` is borrowed; requests on any other descriptor than
  // `buffered_fd` go to `inner` unchanged.
  DirectIoBackend(std::unique_ptr<StorageBackend> inner, int buffered_fd, int direct_fd,
                  std::size_t alignment = 4096);

  const char* name() const noexcept override { return inner_->name(); }
  void write(int fd, std::span<const IoRequest> requests) override;
  void read(int fd, std::span<const IoRequest> requests,
            std::span<std::size_t> bytes_read) override;

 private:
  bool aligned(const IoRequest& request) const;

  std::unique_ptr<StorageBackend> inner_;
  int buffered_fd_;
  int direct_fd_;
  std::size_t alignment_;
};

}  // namespace flowio::io
