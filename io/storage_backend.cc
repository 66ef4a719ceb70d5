#include "io/storage_backend.h"

#include <atomic>
#include <cstdlib>
#include <limits>

#include "flowio/error.h"
#include "io/posix_backend.h"
#include "io/uring_backend.h"

namespace flowio::io {
namespace {

constexpr const char* backend_variable = "FLOWIO_IO_BACKEND";

BackendKind kind_from_environment() {
  // getenv is safe here as long as nobody calls setenv concurrently, which
  // is the rule for the whole process anyway.
  const char* value = std::getenv(backend_variable);
  if (value == nullptr || *value == '\0') return BackendKind::automatic;
  try {
    return parse_backend_kind(value);
  } catch (const UsageError& error) {
    throw UsageError(ErrorCode::invalid_argument,
                     std::string(backend_variable) + ": " + error.what());
  }
}

std::unique_ptr<StorageBackend> make_unwrapped(BackendKind kind) {
  if (kind == BackendKind::automatic) kind = kind_from_environment();
  switch (kind) {
    case BackendKind::automatic:
      if (UringBackend::available()) return std::make_unique<UringBackend>();
      return std::make_unique<PosixBackend>();
    case BackendKind::io_uring:
      if (!UringBackend::available()) {
        throw UsageError(ErrorCode::unsupported,
                         "the io_uring storage backend was asked for, but this kernel does not "
                         "let an io_uring ring be created");
      }
      return std::make_unique<UringBackend>();
    case BackendKind::posix:
      return std::make_unique<PosixBackend>();
  }
  throw UsageError(ErrorCode::invalid_argument, "unknown storage backend kind");
}

// Set once by test-only code before any file is opened; relaxed suffices
// because that happens before the threads that open files start.
std::atomic<BackendWrapper> backend_wrapper{nullptr};

}  // namespace

void set_backend_wrapper(BackendWrapper wrapper) noexcept {
  backend_wrapper.store(wrapper, std::memory_order_relaxed);
}

std::unique_ptr<StorageBackend> make_storage_backend(BackendKind kind, const BackendLayer& layer) {
  std::unique_ptr<StorageBackend> backend = make_unwrapped(kind);
  if (layer) backend = layer(std::move(backend));
  if (const BackendWrapper wrapper = backend_wrapper.load(std::memory_order_relaxed)) {
    return wrapper(std::move(backend));
  }
  return backend;
}

BackendKind parse_backend_kind(const std::string& text) {
  if (text == "auto") return BackendKind::automatic;
  if (text == "io_uring") return BackendKind::io_uring;
  if (text == "posix") return BackendKind::posix;
  throw UsageError(ErrorCode::invalid_argument,
                   "storage backend \"" + text + "\": expected auto, io_uring or posix");
}

void check_requests(std::span<const IoRequest> requests) {
  constexpr std::uint64_t largest_offset = std::numeric_limits<std::int64_t>::max();
  auto reject = [](std::size_t index, const std::string& why) {
    throw UsageError(ErrorCode::invalid_argument,
                     "I/O request " + std::to_string(index) + ": " + why);
  };
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const IoRequest& request = requests[i];
    if (request.file_offset < 0) {
      reject(i, "negative file offset " + std::to_string(request.file_offset));
    }
    if (request.bytes > largest_offset - static_cast<std::uint64_t>(request.file_offset)) {
      reject(i, "range ends past the largest file offset");
    }
    std::size_t sum = 0;
    for (const iovec& piece : request.memory) {
      // Compared this way round so that the sum cannot overflow.
      if (piece.iov_len > request.bytes - sum) {
        reject(i,
               "iovec lengths add up to more than its " + std::to_string(request.bytes) + " bytes");
      }
      sum += piece.iov_len;
    }
    if (sum != request.bytes) {
      reject(i, "iovec lengths add up to " + std::to_string(sum) + ", not " +
                    std::to_string(request.bytes) + " bytes");
    }
  }
}

void check_read_requests(std::span<const IoRequest> requests,
                         std::span<const std::size_t> bytes_read) {
  check_requests(requests);
  if (bytes_read.size() < requests.size()) {
    throw UsageError(ErrorCode::invalid_count,
                     "read of " + std::to_string(requests.size()) + " requests has room for " +
                         std::to_string(bytes_read.size()) + " byte counts");
  }
}

}  // namespace flowio::io
