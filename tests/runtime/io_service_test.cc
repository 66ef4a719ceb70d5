// The I/O thread with the progress engine: its io_uring transfers complete
// through the progress thread (which wakes on the ring's eventfd), every
// byte lands where it belongs, the idle pair costs (almost) no CPU, and
// with FLOWIO_IO_BACKEND=posix there is no ring at all.
#include "runtime/engine/io_service.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "io/file_descriptor.h"
#include "io/uring_backend.h"
#include "runtime/engine/progress.h"

using flowio::io::IoRequest;
using flowio::runtime::IoService;
using flowio::runtime::Progress;

namespace {

std::string scratch(const std::string& name) {
  const char* directory = std::getenv("TEST_TMPDIR");
  return std::string(directory != nullptr ? directory : "/tmp") + "/flowio-" +
         std::to_string(::getpid()) + "-" + name;
}

}  // namespace

// 1,000 spaced requests written, then read back, on the I/O thread: more
// than the ring holds, so the progress thread reaps and the I/O thread
// submits again several times.
TEST_CASE("Runtime.IoService.TransfersCompleteThroughProgress") {
  Progress progress;
  IoService io(progress);
  if (!io.reaped_by_progress()) {
    MESSAGE("io_uring unavailable here: the I/O thread uses plain system calls");
    return;
  }
  const std::string path = scratch("io_service");
  flowio::io::FileDescriptor file =
      flowio::io::FileDescriptor::open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  constexpr std::size_t kCount = 1000, kBytes = 700;
  std::vector<unsigned char> out(kCount * kBytes), in(kCount * kBytes, 0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i % 251);
  std::vector<iovec> out_memory, in_memory;
  for (std::size_t i = 0; i < kCount; ++i) {
    out_memory.push_back(iovec{out.data() + i * kBytes, kBytes});
    in_memory.push_back(iovec{in.data() + i * kBytes, kBytes});
  }
  std::vector<IoRequest> writes, reads;
  for (std::size_t i = 0; i < kCount; ++i) {
    const auto offset = static_cast<std::int64_t>(3 * i * kBytes);
    writes.push_back(IoRequest{offset, std::span<const iovec>(&out_memory[i], 1), kBytes});
    reads.push_back(IoRequest{offset, std::span<const iovec>(&in_memory[i], 1), kBytes});
  }
  std::vector<std::size_t> got(kCount);
  const std::int64_t cpu_before = progress.cpu_ns();
  std::promise<void> done;
  io.post([&] {
    flowio::io::UringBackend backend;
    backend.write(file.get(), writes);
    backend.read(file.get(), reads, got);
    done.set_value();
  });
  REQUIRE(done.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(in == out);
  CHECK(std::all_of(got.begin(), got.end(), [](std::size_t n) { return n == kBytes; }));
  // The completions woke the progress thread: it ran.
  CHECK(progress.cpu_ns() > cpu_before);
  ::unlink(path.c_str());
}

// With the ring's eventfd watched and nothing to do, the progress thread
// blocks: a second costs under 1% of a core.
TEST_CASE("Runtime.IoService.IdleCostsNothing") {
  Progress progress;
  IoService io(progress);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::int64_t before = progress.cpu_ns();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::int64_t idle_cpu = progress.cpu_ns() - before;
  MESSAGE("progress thread CPU over 1 s idle, ring watched: " << idle_cpu / 1000 << " us");
  CHECK(idle_cpu < 10'000'000);
}

// FLOWIO_IO_BACKEND=posix: no ring is made, and posted work still runs.
TEST_CASE("Runtime.IoService.PosixMeansNoRing") {
  ::setenv("FLOWIO_IO_BACKEND", "posix", 1);
  Progress progress;
  IoService io(progress);
  ::unsetenv("FLOWIO_IO_BACKEND");
  CHECK_FALSE(io.reaped_by_progress());
  std::promise<void> ran;
  io.post([&] { ran.set_value(); });
  CHECK(ran.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
}
