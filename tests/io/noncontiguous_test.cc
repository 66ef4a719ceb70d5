#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// Ranges separated by holes, in shuffled order, each from 1-4 pieces.
RequestSet scattered_ranges(unsigned seed, int count) {
  std::mt19937 random(seed);
  std::vector<std::pair<std::int64_t, std::vector<std::size_t>>> ranges;
  std::int64_t offset = 0;
  for (int i = 0; i < count; ++i) {
    offset += static_cast<std::int64_t>(random() % 5000);
    std::vector<std::size_t> pieces(1 + random() % 4);
    for (std::size_t& length : pieces) length = 1 + random() % 3000;
    ranges.emplace_back(offset, pieces);
    for (std::size_t length : pieces) offset += static_cast<std::int64_t>(length);
  }
  std::shuffle(ranges.begin(), ranges.end(), random);
  RequestSet set;
  for (auto& [file_offset, pieces] : ranges) set.add(file_offset, std::move(pieces));
  return set;
}

}  // namespace

// Many noncontiguous ranges land where they belong (checked with plain
// pread) and read back into the right pieces.
TEST_CASE("Io.Noncontiguous.WriteThenRead") {
  round_trip_on_each_backend("noncontiguous", [] { return scattered_ranges(12345, 200); });
}

// Empty requests mixed with others are accepted and read as zero bytes.
TEST_CASE("Io.Noncontiguous.EmptyRequests") {
  for_each_backend([](StorageBackend& backend) {
    ScratchFile file(std::string("empty-requests-") + backend.name());
    RequestSet set;
    set.add(0, {100});
    set.add(100, {});
    set.add(200, {0, 50, 0});
    set.add(5000, {0});
    set.fill_with_pattern();
    backend.write(file.fd(), set.requests());
    CHECK(file.descriptor().size() == 250);

    set.fill_untouched();
    std::vector<std::size_t> bytes_read(set.size(), 99);
    backend.read(file.fd(), set.requests(), bytes_read);
    CHECK(set.check_read(bytes_read, 250) == "");
  });
}

}  // namespace flowio::io::testing
