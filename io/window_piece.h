// One piece of an aggregator's window: a contiguous range of the file and
// where its bytes are in memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "runtime/core/bulk_copy.h"
#include "runtime/core/byte_order.h"

namespace flowio::io {

struct WindowPiece {
  std::int64_t offset = 0;  // in the file
  std::int64_t length = 0;
  char* data = nullptr;  // its bytes in memory
  // Writes: the bytes in memory are those of a run of `reversed_unit`-byte
  // units (2, 4, 8 or 16) that go to the file with each unit's byte order
  // reversed (an aggregator converting a client's native data to external32,
  // runtime/stages/aggregator_conversion.h); 0: they go as they are. The piece
  // begins `unit_phase` bytes into its first unit, and the whole units it
  // touches lie in memory around `data` (a unit may straddle two pieces).
  std::int32_t reversed_unit = 0;
  std::int32_t unit_phase = 0;
};

// Bytes [skip, skip + bytes) of `piece` as they go to the file, to `to`.
// Called once per piece of a window (a million 64-byte pieces in a call
// of bench/ncio): whole units, the usual case, go straight to the kernel,
// and units being powers of two, phases are masks rather than divisions.
inline void copy_to_file_form(const WindowPiece& piece, std::int64_t skip, std::int64_t bytes,
                              char* to) {
  const std::int64_t unit = piece.reversed_unit;
  if (unit <= 1) {
    core::copy_bytes(to, piece.data + skip, static_cast<std::size_t>(bytes));
    return;
  }
  const std::int64_t phase = (piece.unit_phase + skip) & (unit - 1);
  if (phase == 0 && (bytes & (unit - 1)) == 0) {
    core::reverse_units(unit, piece.data + skip, to, bytes / unit);
  } else {
    core::copy_reversing_units(piece.data + skip, bytes, unit, phase, to);
  }
}

// Every piece in file form at `destination(piece)` (a char*). The
// pieces' bytes are in the window's buffer, mostly out of cache by now,
// and file order jumps between the clients' parts of it: the first bytes
// of a piece a few ahead are asked for while this one is copied. Without
// that, converting a window of 64-byte pieces (bench/ncio c-nc) took a
// fifth longer than memcpy's copy; with it, the same (w38).
template <typename Destination>
inline void copy_pieces_to_file_form(std::span<const WindowPiece> pieces, Destination destination) {
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i + kAhead < pieces.size()) __builtin_prefetch(pieces[i + kAhead].data);
    copy_to_file_form(pieces[i], 0, pieces[i].length, destination(pieces[i]));
  }
}

}  // namespace flowio::io
