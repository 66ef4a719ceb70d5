#include "io/mapped_backend.h"

namespace flowio::io {

namespace {

std::int64_t total_bytes(std::span<const IoRequest> requests) {
  std::int64_t bytes = 0;
  for (const IoRequest& request : requests) bytes += static_cast<std::int64_t>(request.bytes);
  return bytes;
}

}  // namespace

FileMapping* MappedBackend::mapping_of(int fd) const {
  return mapping_ != nullptr && fd == mapping_->fd() ? mapping_ : nullptr;
}

void MappedBackend::write(int fd, std::span<const IoRequest> requests) {
  FileMapping* mapping = mapping_of(fd);
  if (mapping != nullptr && total_bytes(requests) > kMappedWriteAtMostBytes) mapping = nullptr;
  if (mapping != nullptr) {
    // The checks every backend makes, before anything moves.
    check_requests(requests);
    if (mapping->store_resident(requests)) return;
  }
  inner_->write(fd, requests);
  if (mapping == nullptr) return;
  // A request of no bytes shows nothing: the file need not reach it.
  for (const IoRequest& request : requests) {
    if (request.bytes == 0) continue;
    mapping->note_transfer(request.file_offset,
                           request.file_offset + static_cast<std::int64_t>(request.bytes));
  }
}

bool MappedBackend::fill_in_place(int fd, std::int64_t offset, std::int64_t bytes,
                                  void (*fill)(void*, char*), void* context) {
  if (mapping_of(fd) == nullptr || bytes <= 0 || bytes > kMappedWriteAtMostBytes) return false;
  return mapping_->fill_resident(offset, bytes, fill, context);
}

void MappedBackend::read(int fd, std::span<const IoRequest> requests,
                         std::span<std::size_t> bytes_read) {
  FileMapping* mapping = mapping_of(fd);
  const std::int64_t bytes = mapping != nullptr ? total_bytes(requests) : 0;
  if (bytes > kMappedRereadAtMostBytes) mapping = nullptr;
  if (mapping != nullptr) {
    check_read_requests(requests, bytes_read);
    const FileMapping::Pages pages =
        bytes <= kMappedReadAtMostBytes ? FileMapping::Pages::any : FileMapping::Pages::mapped;
    if (mapping->load_resident(requests, pages)) {
      for (std::size_t i = 0; i < requests.size(); ++i) bytes_read[i] = requests[i].bytes;
      return;
    }
  }
  inner_->read(fd, requests, bytes_read);
  if (mapping == nullptr) return;
  // The bytes a request got were in the file: it was at least that long
  // (a request that got none shows nothing).
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (bytes_read[i] == 0) continue;
    const std::int64_t begin = requests[i].file_offset;
    mapping->note_transfer(begin, begin + static_cast<std::int64_t>(bytes_read[i]));
  }
}

}  // namespace flowio::io
