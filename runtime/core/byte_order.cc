#include "runtime/core/byte_order.h"

#include <cstring>

namespace flowio::core {
namespace {

// Loads and stores go through memcpy (no alignment needed); the compiler
// turns the loops into vector shuffles.
template <int N>
void reverse_fixed(const char* from, char* to, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    if constexpr (N == 2) {
      std::uint16_t v;
      std::memcpy(&v, from + 2 * i, 2);
      v = __builtin_bswap16(v);
      std::memcpy(to + 2 * i, &v, 2);
    } else if constexpr (N == 4) {
      std::uint32_t v;
      std::memcpy(&v, from + 4 * i, 4);
      v = __builtin_bswap32(v);
      std::memcpy(to + 4 * i, &v, 4);
    } else if constexpr (N == 8) {
      std::uint64_t v;
      std::memcpy(&v, from + 8 * i, 8);
      v = __builtin_bswap64(v);
      std::memcpy(to + 8 * i, &v, 8);
    } else {
      for (int b = 0; b < N; ++b) to[N * i + b] = from[N * i + N - 1 - b];
    }
  }
}

}  // namespace

void reverse_units(std::int64_t unit, const char* from, char* to, std::int64_t count) {
  switch (unit) {
    case 2:
      return reverse_fixed<2>(from, to, count);
    case 4:
      return reverse_fixed<4>(from, to, count);
    case 8:
      return reverse_fixed<8>(from, to, count);
    default:
      return reverse_fixed<16>(from, to, count);
  }
}

void copy_reversing_units(const char* data, std::int64_t bytes, std::int64_t unit,
                          std::int64_t phase, char* to) {
  if (unit <= 1) {
    std::memcpy(to, data, static_cast<std::size_t>(bytes));
    return;
  }
  // The head: the rest of the unit that began before `data`.
  const char* const first_unit = data - phase;
  std::int64_t i = 0;
  for (; i < bytes && phase + i < unit && phase > 0; ++i)
    to[i] = first_unit[unit - 1 - (phase + i)];
  // Whole units, then the beginning of the unit that ends after the range.
  const std::int64_t whole = (bytes - i) / unit;
  reverse_units(unit, data + i, to + i, whole);
  i += whole * unit;
  const char* const last_unit = data + i;
  for (std::int64_t j = 0; i < bytes; ++i, ++j) to[i] = last_unit[unit - 1 - j];
}

}  // namespace flowio::core
