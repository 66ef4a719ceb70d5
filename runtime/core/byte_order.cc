#include "runtime/core/byte_order.h"

#include <cstring>

namespace flowio::core {

void reverse_units(std::int64_t unit, const char* from, char* to, std::int64_t count) {
  switch (unit) {
    case 2:
      return reverse_units_of<2>(from, to, count);
    case 4:
      return reverse_units_of<4>(from, to, count);
    case 8:
      return reverse_units_of<8>(from, to, count);
    default:
      return reverse_units_of<16>(from, to, count);
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
