#include <doctest/doctest.h>
#include <fcntl.h>

#include <cerrno>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// Runs `call`, which must throw IoError, and returns its (code, errno).
template <class Call>
std::pair<ErrorCode, int> io_error_of(Call&& call) {
  try {
    call();
  } catch (const IoError& error) {
    return {error.code(), error.system_errno()};
  }
  FAIL("no IoError was thrown");
  return {ErrorCode::io, 0};
}

// Writes a few bytes of the pattern through `backend` and checks they
// arrived: the backend (and this thread's ring) still works after a failure.
void check_still_writes(StorageBackend& backend) {
  ScratchFile file(std::string("after-failure-") + backend.name());
  RequestSet set;
  for (int i = 0; i < 10; ++i) set.add(i * 10, {5, 5});
  set.fill_with_pattern();
  backend.write(file.fd(), set.requests());
  CHECK(set.check_file(file.fd()) == "");
}

}  // namespace

// Writing through a descriptor opened read-only fails with EBADF.
TEST_CASE("Io.BackendErrors.WriteToReadOnlyFd") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("read-only-") + backend.name());
    const FileDescriptor read_only = FileDescriptor::open(file.path(), O_RDONLY);
    RequestSet set;
    set.add(0, {100});
    set.add(200, {100, 100});
    set.fill_with_pattern();
    const auto [code, system_errno] =
        io_error_of([&] { backend.write(read_only.get(), set.requests()); });
    CHECK(code == ErrorCode::io);
    CHECK(system_errno == EBADF);
    check_still_writes(backend);
  });
}

// Reading through a descriptor opened write-only fails with EBADF.
TEST_CASE("Io.BackendErrors.ReadFromWriteOnlyFd") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("write-only-") + backend.name());
    write_pattern_file(file.fd(), 1000);
    const FileDescriptor write_only = FileDescriptor::open(file.path(), O_WRONLY);
    RequestSet set;
    set.add(0, {100});
    set.fill_untouched();
    std::vector<std::size_t> bytes_read(set.size(), 0);
    const auto [code, system_errno] =
        io_error_of([&] { backend.read(write_only.get(), set.requests(), bytes_read); });
    CHECK(code == ErrorCode::io);
    CHECK(system_errno == EBADF);
  });
}

// A full device (/dev/full answers every write with ENOSPC) gives no_space.
TEST_CASE("Io.BackendErrors.NoSpace") {
  for_each_backend([](StorageBackend& backend) {
    const FileDescriptor full = FileDescriptor::open("/dev/full", O_WRONLY);
    RequestSet set;
    set.add(0, {4096});
    set.fill_with_pattern();
    const auto [code, system_errno] =
        io_error_of([&] { backend.write(full.get(), set.requests()); });
    CHECK(code == ErrorCode::no_space);
    CHECK(system_errno == ENOSPC);
  });
}

// When many requests in flight fail, the call waits for all of them, throws
// the first error, and the thread can go on using the backend.
TEST_CASE("Io.BackendErrors.ManyRequestsFail") {
  for_each_backend([](StorageBackend& backend) {
    const FileDescriptor full = FileDescriptor::open("/dev/full", O_WRONLY);
    RequestSet set;
    for (std::size_t r = 0; r < 2 * UringBackend::ring_depth + 3; ++r) {
      set.add(static_cast<std::int64_t>(r) * 64, {32, 32});
    }
    set.fill_with_pattern();
    const auto [code, system_errno] =
        io_error_of([&] { backend.write(full.get(), set.requests()); });
    CHECK(code == ErrorCode::no_space);
    CHECK(system_errno == ENOSPC);
    check_still_writes(backend);
  });
}

// Requests that break the contract are refused before any I/O starts.
TEST_CASE("Io.BackendErrors.InvalidRequests") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("invalid-") + backend.name());
    char memory[16] = {};
    const iovec piece{memory, sizeof memory};

    const IoRequest wrong_bytes[] = {{0, {&piece, 1}, 15}};
    CHECK_THROWS_AS(backend.write(file.fd(), wrong_bytes), UsageError);
    const IoRequest negative_offset[] = {{-1, {&piece, 1}, 16}};
    CHECK_THROWS_AS(backend.write(file.fd(), negative_offset), UsageError);

    const IoRequest fine[] = {{0, {&piece, 1}, 16}, {16, {&piece, 1}, 16}};
    std::size_t one_count[1] = {};
    try {
      backend.read(file.fd(), fine, one_count);
      FAIL("a read with too few byte counts was accepted");
    } catch (const UsageError& error) {
      CHECK(error.code() == ErrorCode::invalid_count);
    }
    CHECK(file.descriptor().size() == 0);
  });
}

// A call with no requests does nothing.
TEST_CASE("Io.BackendErrors.NoRequests") {
  for_each_backend([](StorageBackend& backend) {
    CHECK_NOTHROW(backend.write(-1, {}));
    CHECK_NOTHROW(backend.read(-1, {}, {}));
  });
}

}  // namespace flowio::io::testing
