// One piece of an aggregator's window: a contiguous range of the file and
// where its bytes are in memory.
#pragma once

#include <cstdint>

#include "runtime/core/byte_order.h"

namespace flowio::io {

struct WindowPiece {
  std::int64_t offset = 0;  // in the file
  std::int64_t length = 0;
  char* data = nullptr;  // its bytes in memory
  // Writes: the bytes in memory are those of a run of `reversed_unit`-byte
  // units that go to the file with each unit's byte order reversed (an
  // aggregator converting a client's native data to external32,
  // runtime/aggregator_conversion.h); 0: they go as they are. The piece
  // begins `unit_phase` bytes into its first unit, and the whole units it
  // touches lie in memory around `data` (a unit may straddle two pieces).
  std::int32_t reversed_unit = 0;
  std::int32_t unit_phase = 0;
};

// Bytes [skip, skip + bytes) of `piece` as they go to the file, to `to`.
inline void copy_to_file_form(const WindowPiece& piece, std::int64_t skip, std::int64_t bytes,
                              char* to) {
  const std::int64_t phase =
      piece.reversed_unit > 1 ? (piece.unit_phase + skip) % piece.reversed_unit : 0;
  core::copy_reversing_units(piece.data + skip, bytes, piece.reversed_unit, phase, to);
}

}  // namespace flowio::io
