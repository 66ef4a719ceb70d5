// One piece of an aggregator's window: a contiguous range of the file and
// where its bytes are in memory.
#pragma once

#include <cstdint>

namespace flowio::io {

struct WindowPiece {
  std::int64_t offset = 0;  // in the file
  std::int64_t length = 0;
  char* data = nullptr;  // its bytes in memory
};

}  // namespace flowio::io
