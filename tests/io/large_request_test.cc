#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

constexpr std::size_t mebibyte = std::size_t{1} << 20;

}  // namespace

// One 64 MiB request from one buffer.
TEST_CASE("Io.LargeRequest.SingleIovec") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("large-single-") + backend.name());
    RequestSet set;
    set.add(4096, {64 * mebibyte});
    write_then_read_back(backend, file, set);
  });
}

// 64 MiB from pieces of odd sizes, next to small requests.
TEST_CASE("Io.LargeRequest.ManyIovecsNextToSmallRequests") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("large-pieces-") + backend.name());
    RequestSet set;
    set.add(0, {100});
    std::vector<std::size_t> pieces(16, 4 * mebibyte);
    pieces.front() -= 3;
    pieces.back() += 3;
    set.add(100, pieces);
    set.add(100 + 64 * static_cast<std::int64_t>(mebibyte), {7, 9});
    write_then_read_back(backend, file, set);
  });
}

}  // namespace flowio::io::testing
