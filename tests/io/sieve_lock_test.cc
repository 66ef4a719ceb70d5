// SieveLock: an extent held through one open file description keeps out
// holders of overlapping extents through another description (as another
// process would be) and other threads of this process, not holders of
// disjoint extents; a held extent can be released on another thread; a
// sieving window write waits for the lock (without one, its caller keeps
// other writers out); locks of the file's own bytes do not meet it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "io/posix_backend.h"
#include "io/sieve_lock.h"
#include "io/window_io.h"
#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

using std::chrono::milliseconds;

// Long enough for a thread that is not kept out to get its extent on a
// loaded machine; a kept-out one must still be waiting after it.
constexpr milliseconds kSettle{200};

// Starts a thread that takes [begin, end) of `lock` and sets `got`; the
// caller joins it.
std::thread take_in_background(SieveLock& lock, std::int64_t begin, std::int64_t end,
                               std::atomic<bool>& got) {
  return std::thread([&lock, begin, end, &got] {
    SieveLock::Held held = lock.lock(begin, end);
    CHECK(static_cast<bool>(held));
    got = true;
  });
}

// Window settings that sieve every window with holes, by read-modify-write
// copies (not through a mapping).
WindowIoSettings sieving() {
  WindowIoSettings settings;
  settings.sieve = SieveMode::enable;
  settings.mapping = SieveMode::disable;
  return settings;
}

}  // namespace

TEST_CASE("Io.SieveLock.OtherDescriptionsWaitForOverlappingExtents") {
  ScratchFile file("sieve-lock-descriptions");
  FileDescriptor other = FileDescriptor::open(file.path(), O_RDWR);
  SieveLock mine(file.fd());
  SieveLock theirs(other.get());

  SieveLock::Held held = mine.lock(0, 100);
  REQUIRE(static_cast<bool>(held));
  std::atomic<bool> disjoint_got{false};
  std::thread disjoint = take_in_background(theirs, 100, 200, disjoint_got);
  disjoint.join();
  CHECK(disjoint_got);  // [100, 200) does not meet [0, 100)

  std::atomic<bool> overlapping_got{false};
  std::thread overlapping = take_in_background(theirs, 50, 150, overlapping_got);
  std::this_thread::sleep_for(kSettle);
  CHECK_FALSE(overlapping_got);
  held.release();
  overlapping.join();
  CHECK(overlapping_got);
}

// Atomic mode may hold fcntl locks of the file's own bytes (through
// another description) while this process sieves under them.
TEST_CASE("Io.SieveLock.LocksOfTheFilesBytesDoNotMeetIt") {
  ScratchFile file("sieve-lock-bytes");
  FileDescriptor other = FileDescriptor::open(file.path(), O_RDWR);
  struct flock bytes {};
  bytes.l_type = F_WRLCK;
  bytes.l_whence = SEEK_SET;
  bytes.l_start = 0;
  bytes.l_len = std::int64_t{1} << 40;  // every byte a file here holds
  REQUIRE(::fcntl(other.get(), F_OFD_SETLK, &bytes) == 0);
  SieveLock lock(file.fd());
  std::atomic<bool> got{false};
  std::thread taker = take_in_background(lock, 0, 4096, got);
  taker.join();
  CHECK(got);
  // And the sieve lock keeps nobody from the file's bytes.
  SieveLock::Held held = lock.lock(0, 4096);
  REQUIRE(static_cast<bool>(held));
  FileDescriptor third = FileDescriptor::open(file.path(), O_RDWR);
  bytes.l_len = 4096;
  bytes.l_type = F_WRLCK;
  other = FileDescriptor();  // drops the first lock of the bytes
  CHECK(::fcntl(third.get(), F_OFD_SETLK, &bytes) == 0);
}

TEST_CASE("Io.SieveLock.ThreadsOfOneProcessTakeTurns") {
  ScratchFile file("sieve-lock-threads");
  SieveLock lock(file.fd());
  SieveLock::Held held = lock.lock(0, 10);
  std::atomic<bool> got{false};
  // Even a disjoint extent waits: one holder per process at a time, since
  // one description's locks do not exclude one another.
  std::thread waiter = take_in_background(lock, 1000, 2000, got);
  std::this_thread::sleep_for(kSettle);
  CHECK_FALSE(got);
  // Released on another thread than the one that took it.
  std::thread([&held] { held.release(); }).join();
  waiter.join();
  CHECK(got);
  CHECK(lock.available());
}

TEST_CASE("Io.SieveLock.SievingWriteWaitsForTheHolder") {
  ScratchFile file("sieve-lock-window");
  FileDescriptor other = FileDescriptor::open(file.path(), O_RDWR);
  const std::vector<char> background(4096, 'o');
  REQUIRE(::pwrite(file.fd(), background.data(), background.size(), 0) == 4096);
  SieveLock aggregator(file.fd());
  SieveLock independent(other.get());
  PosixBackend backend;
  std::vector<char> data(4096, 'a');
  // Two pieces with a hole between them: sieved.
  const std::vector<WindowPiece> pieces = {{0, 100, data.data()}, {3000, 100, data.data()}};
  const WindowIoSettings settings = sieving();

  SieveLock::Held writer_of_the_hole = independent.lock(0, 4096);
  std::atomic<bool> written{false};
  std::vector<char> staging;
  std::thread window([&] {
    const WindowIoResult result =
        write_window(backend, file.fd(), pieces, settings, staging, &aggregator);
    CHECK(result.method == WindowMethod::sieve);
    written = true;
  });
  std::this_thread::sleep_for(kSettle);
  CHECK_FALSE(written);
  // The hole's writer lands its bytes while it holds the extent; the
  // sieving write that follows reads them and writes them back.
  const std::vector<char> hole(1000, 'h');
  REQUIRE(::pwrite(other.get(), hole.data(), hole.size(), 1000) == 1000);
  writer_of_the_hole.release();
  window.join();
  std::vector<char> image(4096);
  REQUIRE(::pread(file.fd(), image.data(), image.size(), 0) == 4096);
  CHECK(image[50] == 'a');
  CHECK(image[1500] == 'h');
  CHECK(image[3050] == 'a');
  CHECK(image[2500] == 'o');
}

// Without a lock (the caller keeps other writers out, as an atomic-mode
// write allowed to rewrite its extent does) the window sieves.
TEST_CASE("Io.SieveLock.WithoutALockTheCallerKeepsWritersOut") {
  ScratchFile file("sieve-lock-none");
  PosixBackend backend;
  std::vector<char> data(200, 'a');
  const std::vector<WindowPiece> pieces = {{0, 100, data.data()}, {1000, 100, data.data()}};
  const WindowIoSettings settings = sieving();
  std::vector<char> staging;
  const WindowIoResult result =
      write_window(backend, file.fd(), pieces, settings, staging, nullptr);
  CHECK(result.method == WindowMethod::sieve);
  CHECK(result.requests == 2);
}

}  // namespace flowio::io::testing
