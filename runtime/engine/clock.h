// The runtime's clock: nanoseconds of CLOCK_MONOTONIC, one clock for every
// process of a node (so traces of several ranks line up).
#pragma once

#include <time.h>

#include <cstdint>

namespace flowio::runtime {

inline std::int64_t now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

}  // namespace flowio::runtime
