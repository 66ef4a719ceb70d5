#include "io/direct_io_backend.h"

#include <cstdint>
#include <vector>

namespace flowio::io {

DirectIoBackend::DirectIoBackend(std::unique_ptr<StorageBackend> inner, int buffered_fd,
                                 int direct_fd, std::size_t alignment)
    : inner_(std::move(inner)),
      buffered_fd_(buffered_fd),
      direct_fd_(direct_fd),
      alignment_(alignment) {}

bool DirectIoBackend::aligned(const IoRequest& request) const {
  if (static_cast<std::uint64_t>(request.file_offset) % alignment_ != 0 ||
      request.bytes % alignment_ != 0) {
    return false;
  }
  for (const iovec& piece : request.memory) {
    if (reinterpret_cast<std::uintptr_t>(piece.iov_base) % alignment_ != 0 ||
        piece.iov_len % alignment_ != 0) {
      return false;
    }
  }
  return true;
}

void DirectIoBackend::write(int fd, std::span<const IoRequest> requests) {
  if (fd != buffered_fd_) return inner_->write(fd, requests);
  std::vector<IoRequest> direct, buffered;
  for (const IoRequest& request : requests)
    (aligned(request) ? direct : buffered).push_back(request);
  if (!direct.empty()) inner_->write(direct_fd_, direct);
  if (!buffered.empty()) inner_->write(fd, buffered);
}

void DirectIoBackend::read(int fd, std::span<const IoRequest> requests,
                           std::span<std::size_t> bytes_read) {
  if (fd != buffered_fd_) return inner_->read(fd, requests, bytes_read);
  // Reads keep their order of results: split, then scatter the counts back.
  std::vector<IoRequest> direct, buffered;
  std::vector<std::size_t> direct_index, buffered_index;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (aligned(requests[i])) {
      direct.push_back(requests[i]);
      direct_index.push_back(i);
    } else {
      buffered.push_back(requests[i]);
      buffered_index.push_back(i);
    }
  }
  std::vector<std::size_t> got(requests.size());
  if (!direct.empty()) {
    inner_->read(direct_fd_, direct, std::span<std::size_t>(got.data(), direct.size()));
    for (std::size_t k = 0; k < direct.size(); ++k) bytes_read[direct_index[k]] = got[k];
  }
  if (!buffered.empty()) {
    inner_->read(fd, buffered, std::span<std::size_t>(got.data(), buffered.size()));
    for (std::size_t k = 0; k < buffered.size(); ++k) bytes_read[buffered_index[k]] = got[k];
  }
}

}  // namespace flowio::io
