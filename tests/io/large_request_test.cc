#include <doctest/doctest.h>

#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

constexpr std::size_t mebibyte = std::size_t{1} << 20;

}  // namespace

// One 64 MiB request from one buffer.
TEST_CASE("Io.LargeRequest.SingleIovec") {
  round_trip_on_each_backend("large-single", [] {
    RequestSet set;
    set.add(4096, {64 * mebibyte});
    return set;
  });
}

// 64 MiB from pieces of odd sizes, next to small requests.
TEST_CASE("Io.LargeRequest.ManyIovecsNextToSmallRequests") {
  round_trip_on_each_backend("large-pieces", [] {
    RequestSet set;
    set.add(0, {100});
    std::vector<std::size_t> pieces(16, 4 * mebibyte);
    pieces.front() -= 3;
    pieces.back() += 3;
    set.add(100, pieces);
    set.add(100 + 64 * static_cast<std::int64_t>(mebibyte), {7, 9});
    return set;
  });
}

}  // namespace flowio::io::testing
