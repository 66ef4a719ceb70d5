#include <doctest/doctest.h>
#include <liburing.h>
#include <sys/resource.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {

// A thread whose ring cannot be created (no file descriptor left for it)
// is served by the POSIX path, and its data still arrives.
TEST_CASE("Io.UringFallback.RingRefusedUsesPosix") {
  if (!UringBackend::available()) {
    flowio::testing::skip("this kernel refuses io_uring rings");
    return;
  }
  ScratchFile file("fallback");
  RequestSet set;
  for (int i = 0; i < 50; ++i) set.add(i * 300, {100, 100});
  set.fill_with_pattern();
  UringBackend backend;

  // Both backends first write once with every descriptor available. Besides
  // showing the normal path works, this matters under UBSan: its vptr check
  // needs a pipe the first time it meets a type, which it could not create
  // with the limit below; afterwards it answers from its cache.
  {
    ScratchFile warm_up("fallback-warm-up");
    PosixBackend posix;
    posix.write(warm_up.fd(), set.requests());
    backend.write(warm_up.fd(), set.requests());
    CHECK(set.check_file(warm_up.fd()) == "");
  }

  // A new thread has no ring yet; with RLIMIT_NOFILE at 0 the kernel cannot
  // give the ring its descriptor. The limit is process-wide, so it is
  // lowered only around the one call.
  std::exception_ptr error;
  bool limit_lowered = false;
  bool ring_refused = false;
  std::thread worker([&] {
    rlimit original{};
    if (::getrlimit(RLIMIT_NOFILE, &original) != 0) return;
    rlimit none = original;
    none.rlim_cur = 0;
    if (::setrlimit(RLIMIT_NOFILE, &none) != 0) return;
    limit_lowered = true;
    // Confirms the premise: no ring can be created now.
    io_uring ring{};
    if (io_uring_queue_init(4, &ring, 0) == 0) {
      io_uring_queue_exit(&ring);
    } else {
      ring_refused = true;
    }
    try {
      backend.write(file.fd(), set.requests());
    } catch (...) {
      error = std::current_exception();
    }
    ::setrlimit(RLIMIT_NOFILE, &original);
  });
  worker.join();
  REQUIRE(limit_lowered);
  REQUIRE(ring_refused);
  if (error) CHECK_NOTHROW(std::rethrow_exception(error));
  CHECK(set.check_file(file.fd()) == "");
}

}  // namespace flowio::io::testing
