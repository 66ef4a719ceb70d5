#include "io/file_descriptor.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "flowio/error.h"
#include "io_test_support.h"

namespace flowio::io::testing {

// Opening a file that does not exist gives no_such_file, naming the path.
TEST_CASE("Io.FileDescriptor.OpenMissingFile") {
  const std::string path = scratch_directory() + "/flowio-does-not-exist";
  try {
    FileDescriptor::open(path, O_RDONLY);
    FAIL("opening a missing file succeeded");
  } catch (const IoError& error) {
    CHECK(error.code() == ErrorCode::no_such_file);
    CHECK(error.system_errno() == ENOENT);
    CHECK(std::string(error.what()).find(path) != std::string::npos);
  }
}

// O_EXCL on an existing file gives file_exists.
TEST_CASE("Io.FileDescriptor.OpenExclusiveExisting") {
  ScratchFile file("exclusive");
  try {
    FileDescriptor::open(file.path(), O_RDWR | O_CREAT | O_EXCL);
    FAIL("O_EXCL on an existing file succeeded");
  } catch (const IoError& error) {
    CHECK(error.code() == ErrorCode::file_exists);
  }
}

// truncate cuts and extends; size reports it.
TEST_CASE("Io.FileDescriptor.TruncateAndSize") {
  ScratchFile file("truncate");
  FileDescriptor& fd = file.descriptor();
  CHECK(fd.size() == 0);
  fd.truncate(12345);
  CHECK(fd.size() == 12345);
  write_pattern_file(fd.get(), 20000);
  CHECK(fd.size() == 20000);
  fd.truncate(100);
  CHECK(fd.size() == 100);
  fd.truncate(0);
  CHECK(fd.size() == 0);
  CHECK_THROWS_AS(fd.truncate(-1), UsageError);
}

// preallocate extends a smaller file, allocates its blocks, keeps its data.
TEST_CASE("Io.FileDescriptor.PreallocateExtends") {
  ScratchFile file("preallocate");
  FileDescriptor& fd = file.descriptor();
  write_pattern_file(fd.get(), 1000);
  fd.preallocate(1 << 20);
  CHECK(fd.size() == 1 << 20);
  struct stat status {};
  REQUIRE(::fstat(fd.get(), &status) == 0);
  // Where fallocate works, the blocks are allocated; where it is not
  // supported, the file has only been extended.
  const bool allocated = status.st_blocks * 512 >= (1 << 20);
  if (!allocated) MESSAGE("this file system does not allocate ahead: the file was only extended");
  unsigned char byte = 0;
  REQUIRE(::pread(fd.get(), &byte, 1, 999) == 1);
  CHECK(byte == pattern_byte(999));
  REQUIRE(::pread(fd.get(), &byte, 1, 5000) == 1);
  CHECK(byte == 0);
  fd.preallocate(0);
  CHECK(fd.size() == 1 << 20);
  CHECK_THROWS_AS(fd.preallocate(-1), UsageError);
}

// preallocate never shrinks a larger file.
TEST_CASE("Io.FileDescriptor.PreallocateNeverShrinks") {
  ScratchFile file("preallocate-smaller");
  FileDescriptor& fd = file.descriptor();
  write_pattern_file(fd.get(), 50000);
  fd.preallocate(1000);
  CHECK(fd.size() == 50000);
}

// sync succeeds on a regular file.
TEST_CASE("Io.FileDescriptor.Sync") {
  ScratchFile file("sync");
  write_pattern_file(file.fd(), 4096);
  CHECK_NOTHROW(file.descriptor().sync());
}

// Moving hands the descriptor over; the moved-from handle holds none.
TEST_CASE("Io.FileDescriptor.MoveTransfersOwnership") {
  ScratchFile file("move");
  FileDescriptor first = FileDescriptor::open(file.path(), O_RDONLY);
  const int raw = first.get();
  FileDescriptor second = std::move(first);
  CHECK(second.get() == raw);
  CHECK(second.path() == file.path());
  CHECK_FALSE(first.is_open());  // NOLINT(bugprone-use-after-move): the point of the test
  FileDescriptor third;
  third = std::move(second);
  CHECK(third.get() == raw);
  CHECK(::fcntl(raw, F_GETFD) != -1);
}

// close releases the descriptor; the handle then refuses to be used.
TEST_CASE("Io.FileDescriptor.CloseReleases") {
  ScratchFile file("close");
  FileDescriptor fd = FileDescriptor::open(file.path(), O_RDONLY);
  const int raw = fd.get();
  fd.close();
  CHECK_FALSE(fd.is_open());
  CHECK(::fcntl(raw, F_GETFD) == -1);
  CHECK_NOTHROW(fd.close());
  try {
    (void)fd.size();
    FAIL("size() on a closed handle succeeded");
  } catch (const UsageError& error) {
    CHECK(error.code() == ErrorCode::file_closed);
  }
}

// The destructor closes the descriptor.
TEST_CASE("Io.FileDescriptor.DestructorCloses") {
  ScratchFile file("destructor");
  int raw = -1;
  {
    const FileDescriptor fd = FileDescriptor::open(file.path(), O_RDONLY);
    raw = fd.get();
    CHECK(::fcntl(raw, F_GETFD) != -1);
  }
  CHECK(::fcntl(raw, F_GETFD) == -1);
}

}  // namespace flowio::io::testing
