// Reversing the byte order of fixed-size units: how external32 differs
// from memory for most predefined types on this platform (every integer
// and floating-point type that keeps its size; a complex type is two
// units). Done by a client converting its data before it sends it
// (exchange/external32.h), or by an aggregator on the way of a window to
// the file (io/window_io.h), where a piece of the window may begin or end
// inside a unit.
//
// Pure functions; thread safe.
#pragma once

#include <cstdint>

namespace flowio::core {

// Copies `count` units of `unit` bytes (2, 4, 8 or 16) from `from` to `to`,
// the bytes of each in reverse order. The buffers do not overlap; neither
// needs any alignment.
void reverse_units(std::int64_t unit, const char* from, char* to, std::int64_t count);

// `data` points `phase` bytes (0 <= phase < unit) into a unit of a run of
// `unit`-byte units. Writes to `to` the `bytes` bytes that the run's
// reversed form holds at [data, data + bytes). Reads all of every unit
// that range touches, so bytes before `data` (phase of them) and after
// its end up to the end of the last unit must be readable. unit <= 1:
// a plain copy.
void copy_reversing_units(const char* data, std::int64_t bytes, std::int64_t unit,
                          std::int64_t phase, char* to);

}  // namespace flowio::core
