#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "io/iovec_cursor.h"
#include "io_test_support.h"

namespace flowio::io::testing {

// Requests of more iovecs than one system call accepts (IOV_MAX), some of
// them empty, are moved completely and in order.
TEST_CASE("Io.ManyIovecs.MoreThanIovMax") {
  round_trip_on_each_backend("many-iovecs", [] {
    std::mt19937 random(7);
    RequestSet set;
    std::int64_t offset = 0;
    for (int r = 0; r < 8; ++r) {
      std::vector<std::size_t> pieces(2 * max_iovecs_per_call + 500);
      for (std::size_t& length : pieces) length = random() % 10 == 0 ? 0 : 1 + random() % 64;
      std::size_t bytes = 0;
      for (std::size_t length : pieces) bytes += length;
      set.add(offset, std::move(pieces));
      offset += static_cast<std::int64_t>(bytes) + 1000;
    }
    return set;
  });
}

// Many requests of a hundred small iovecs each.
TEST_CASE("Io.ManyIovecs.ManyRequestsOfManyIovecs") {
  round_trip_on_each_backend("many-requests-many-iovecs", [] {
    std::mt19937 random(8);
    RequestSet set;
    std::int64_t offset = 0;
    for (int r = 0; r < 300; ++r) {
      std::vector<std::size_t> pieces(100);
      for (std::size_t& length : pieces) length = 1 + random() % 100;
      std::size_t bytes = 0;
      for (std::size_t length : pieces) bytes += length;
      set.add(offset, std::move(pieces));
      offset += static_cast<std::int64_t>(bytes) + static_cast<std::int64_t>(random() % 64);
    }
    return set;
  });
}

}  // namespace flowio::io::testing
