#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {

// More requests than the io_uring ring holds: the backend keeps the ring
// full and starts new requests as others complete.
TEST_CASE("Io.RingDepth.MoreRequestsThanDepth") {
  round_trip_on_each_backend("ring-depth", [] {
    std::mt19937 random(99);
    RequestSet set;
    std::int64_t offset = 0;
    const std::size_t count = 3 * UringBackend::ring_depth + 17;
    for (std::size_t r = 0; r < count; ++r) {
      const std::size_t first = 1 + random() % 600;
      std::vector<std::size_t> pieces{first};
      if (r % 3 == 0) pieces.push_back(1 + random() % 600);
      set.add(offset, pieces);
      for (std::size_t length : pieces) offset += static_cast<std::int64_t>(length);
      offset += static_cast<std::int64_t>(random() % 100);
    }
    return set;
  });
}

}  // namespace flowio::io::testing
