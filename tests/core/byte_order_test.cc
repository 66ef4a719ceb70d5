// Byte order reversal of units, and the copy of any byte range of a run of
// units in reversed form, against a byte-by-byte model: every unit size,
// every phase, lengths that end inside, at and past unit boundaries.
#include "runtime/core/byte_order.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace flowio::core {
namespace {

// Byte `i` of the reversed form of a run of `unit`-byte units.
char reversed_byte(const std::vector<char>& run, std::int64_t unit, std::int64_t i) {
  const std::int64_t start = i / unit * unit;
  return run[static_cast<std::size_t>(start + unit - 1 - (i - start))];
}

std::vector<char> numbered(std::size_t bytes) {
  std::vector<char> run(bytes);
  for (std::size_t i = 0; i < bytes; ++i) run[i] = static_cast<char>(i * 37 + 11);
  return run;
}

}  // namespace

TEST_CASE("Core.ByteOrder.ReverseUnits") {
  for (std::int64_t unit : {2, 4, 8, 16}) {
    CAPTURE(unit);
    const std::vector<char> run = numbered(static_cast<std::size_t>(unit * 9));
    std::vector<char> out(run.size() + 1, '\x7e');
    reverse_units(unit, run.data(), out.data(), 9);
    for (std::int64_t i = 0; i < unit * 9; ++i) {
      CHECK(out[static_cast<std::size_t>(i)] == reversed_byte(run, unit, i));
    }
    CHECK(out.back() == '\x7e');  // nothing past the last unit
  }
}

// Runs long enough for the vector kernel (32 bytes a step, then 16, then
// single units), at every count up to several steps and with the buffers
// misaligned: every byte checked, nothing written past the run.
TEST_CASE("Core.ByteOrder.ReverseUnitsLongRuns") {
  for (std::int64_t unit : {2, 4, 8, 16}) {
    for (std::int64_t count = 0; count * unit <= 160; ++count) {
      for (std::size_t misaligned = 0; misaligned < 3; ++misaligned) {
        CAPTURE(unit);
        CAPTURE(count);
        CAPTURE(misaligned);
        const std::vector<char> run = numbered(static_cast<std::size_t>(unit * count) + misaligned);
        std::vector<char> out(run.size() + 1, '\x7e');
        reverse_units(unit, run.data() + misaligned, out.data() + misaligned, count);
        const std::vector<char> data(run.begin() + static_cast<std::ptrdiff_t>(misaligned),
                                     run.end());
        bool same = out.back() == '\x7e';
        for (std::size_t i = 0; i < misaligned; ++i) same = same && out[i] == '\x7e';
        for (std::int64_t i = 0; i < unit * count; ++i) {
          same =
              same && out[misaligned + static_cast<std::size_t>(i)] == reversed_byte(data, unit, i);
        }
        CHECK(same);
      }
    }
  }
}

TEST_CASE("Core.ByteOrder.RangesOfReversedUnits") {
  for (std::int64_t unit : {1, 2, 4, 8, 16}) {
    const std::int64_t units = 7;
    const std::vector<char> run = numbered(static_cast<std::size_t>(unit * units));
    for (std::int64_t begin = 0; begin < unit * units; ++begin) {
      for (std::int64_t end = begin; end <= unit * units; ++end) {
        CAPTURE(unit);
        CAPTURE(begin);
        CAPTURE(end);
        std::vector<char> out(static_cast<std::size_t>(end - begin) + 1, '\x7e');
        copy_reversing_units(run.data() + begin, end - begin, unit, begin % unit, out.data());
        bool same = out.back() == '\x7e';
        for (std::int64_t i = begin; i < end; ++i) {
          const char expected =
              unit == 1 ? run[static_cast<std::size_t>(i)] : reversed_byte(run, unit, i);
          same = same && out[static_cast<std::size_t>(i - begin)] == expected;
        }
        CHECK(same);
      }
    }
  }
}

}  // namespace flowio::core
