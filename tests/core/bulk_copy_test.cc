// copy_bytes against memcpy's contract: every length around the point
// where the string copy takes over, at every alignment of source and
// destination, moves exactly the bytes asked for and touches nothing
// beside them.
#include "runtime/core/bulk_copy.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

namespace flowio::core {

TEST_CASE("Core.BulkCopy.MovesExactlyTheBytesAsked") {
  constexpr std::size_t kMargin = 64;
  const std::size_t threshold = kBulkCopyFromBytes;
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, threshold - 1,
                                  threshold, threshold + 1, 3 * threshold + 17}) {
    for (const std::size_t from_shift : {0, 1, 7}) {
      for (const std::size_t to_shift : {0, 3, 8}) {
        CAPTURE(bytes);
        CAPTURE(from_shift);
        CAPTURE(to_shift);
        std::vector<unsigned char> source(bytes + 2 * kMargin);
        for (std::size_t i = 0; i < source.size(); ++i) {
          source[i] = static_cast<unsigned char>(i * 131 + 7);
        }
        std::vector<unsigned char> destination(bytes + 2 * kMargin, 0xA5);
        copy_bytes(destination.data() + kMargin + to_shift, source.data() + kMargin + from_shift,
                   bytes);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < destination.size(); ++i) {
          const bool inside = i >= kMargin + to_shift && i < kMargin + to_shift + bytes;
          const unsigned char expected =
              inside ? source[i - to_shift + from_shift] : static_cast<unsigned char>(0xA5);
          if (destination[i] != expected) ++wrong;
        }
        CHECK(wrong == 0);
      }
    }
  }
}

}  // namespace flowio::core
