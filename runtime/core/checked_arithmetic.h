// 64-bit arithmetic on datatype sizes and displacements that refuses to
// overflow: a datatype whose typemap cannot be addressed in 64 bits is a
// bad datatype, reported as UsageError(invalid_datatype), never a wrapped
// number.
#pragma once

#include <cstdint>
#include <string>

#include "flowio/error.h"

namespace flowio::core {

[[noreturn]] inline void bad_type(const std::string& why) {
  throw UsageError(ErrorCode::invalid_datatype, "datatype: " + why);
}

inline std::int64_t checked_multiply(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) bad_type("size overflows 64 bits");
  return product;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) bad_type("size overflows 64 bits");
  return sum;
}

inline std::int64_t checked_subtract(std::int64_t a, std::int64_t b) {
  std::int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference)) bad_type("size overflows 64 bits");
  return difference;
}

}  // namespace flowio::core
