#include <doctest/doctest.h>

#include <exception>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// What one thread did; checked on the test's thread, since the checks
// belong there.
struct ThreadOutcome {
  std::exception_ptr error;
  std::string read_mismatch;
};

}  // namespace

// Several threads share one backend and one file descriptor, each writing
// and reading back its own region with hundreds of requests; run over
// several thread counts.
TEST_CASE("Io.Concurrent.ThreadsShareBackendAndFile") {
  for (const int thread_count : {2, 4, 8}) {
    CAPTURE(thread_count);
    for_each_backend([thread_count](StorageBackend& backend) {
      ScratchFile file("concurrent-" + std::to_string(thread_count) + "-" + backend.name());
      constexpr std::int64_t region = 1 << 20;
      std::vector<RequestSet> sets(static_cast<std::size_t>(thread_count));
      for (int t = 0; t < thread_count; ++t) {
        std::mt19937 random(static_cast<unsigned>(t + 1));
        std::int64_t offset = t * region;
        // At most 2500 bytes a request: 300 fit in the region.
        for (int r = 0; r < 300; ++r) {
          std::vector<std::size_t> pieces{1 + random() % 1000, 1 + random() % 1000};
          sets[static_cast<std::size_t>(t)].add(offset, pieces);
          offset += static_cast<std::int64_t>(pieces[0] + pieces[1] + random() % 500);
        }
        sets[static_cast<std::size_t>(t)].fill_with_pattern();
      }
      // The file's size is set first so that every thread knows where it ends
      // and can check its reads against it.
      const std::int64_t file_size = thread_count * region;
      REQUIRE(::ftruncate(file.fd(), file_size) == 0);

      std::vector<ThreadOutcome> outcomes(static_cast<std::size_t>(thread_count));
      std::vector<std::thread> threads;
      for (int t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
          RequestSet& set = sets[static_cast<std::size_t>(t)];
          ThreadOutcome& outcome = outcomes[static_cast<std::size_t>(t)];
          try {
            backend.write(file.fd(), set.requests());
            set.fill_untouched();
            std::vector<std::size_t> bytes_read(set.size(), 0);
            backend.read(file.fd(), set.requests(), bytes_read);
            outcome.read_mismatch = set.check_read(bytes_read, file_size);
          } catch (...) {
            outcome.error = std::current_exception();
          }
        });
      }
      for (std::thread& thread : threads) thread.join();
      for (int t = 0; t < thread_count; ++t) {
        CAPTURE(t);
        const ThreadOutcome& outcome = outcomes[static_cast<std::size_t>(t)];
        CHECK_FALSE(outcome.error);
        if (outcome.error) CHECK_NOTHROW(std::rethrow_exception(outcome.error));
        CHECK(outcome.read_mismatch == "");
      }
      CHECK(file.descriptor().size() == file_size);
    });
  }
}

}  // namespace flowio::io::testing
