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
#include <cstring>

namespace flowio::core {

// reverse_units for a unit known at compile time (2, 4, 8 or 16), inline:
// for callers that reverse many short runs (a gather of small memory
// pieces), where a call and a dispatch per run would cost more than the
// run. Loads and stores go through memcpy (no alignment needed); the
// compiler turns the loops into shuffles.
template <int Unit>
inline void reverse_units_of(const char* from, char* to, std::int64_t count) {
  static_assert(Unit == 2 || Unit == 4 || Unit == 8 || Unit == 16);
  for (std::int64_t i = 0; i < count; ++i) {
    if constexpr (Unit == 2) {
      std::uint16_t v;
      std::memcpy(&v, from + 2 * i, 2);
      v = __builtin_bswap16(v);
      std::memcpy(to + 2 * i, &v, 2);
    } else if constexpr (Unit == 4) {
      std::uint32_t v;
      std::memcpy(&v, from + 4 * i, 4);
      v = __builtin_bswap32(v);
      std::memcpy(to + 4 * i, &v, 4);
    } else if constexpr (Unit == 8) {
      std::uint64_t v;
      std::memcpy(&v, from + 8 * i, 8);
      v = __builtin_bswap64(v);
      std::memcpy(to + 8 * i, &v, 8);
    } else {
      std::uint64_t low, high;
      std::memcpy(&low, from + 16 * i, 8);
      std::memcpy(&high, from + 16 * i + 8, 8);
      low = __builtin_bswap64(low);
      high = __builtin_bswap64(high);
      std::memcpy(to + 16 * i, &high, 8);
      std::memcpy(to + 16 * i + 8, &low, 8);
    }
  }
}

// Copies `count` units of `unit` bytes (2, 4, 8 or 16) from `from` to `to`,
// the bytes of each in reverse order. The buffers do not overlap; neither
// needs any alignment.
void reverse_units(std::int64_t unit, const char* from, char* to, std::int64_t count);

// reverse_units for runs too long to stay in the cache: the reversed units
// go to memory by non-temporal stores (where the processor has AVX2 and
// `to` is unit-aligned; otherwise as reverse_units), so that the stores
// need not first read every destination line into the cache. For 16 MiB
// runs from two processes at once into a mapped file's pages, 0.77 of
// reverse_units's time and 0.87 of a `rep movsb` copy's; below about
// kUncachedReversalFromBytes, slower than reverse_units (this machine,
// 32 MiB of L3 cache).
inline constexpr std::int64_t kUncachedReversalFromBytes = std::int64_t{16} << 20;
void reverse_units_uncached(std::int64_t unit, const char* from, char* to, std::int64_t count);

// `data` points `phase` bytes (0 <= phase < unit) into a unit of a run of
// `unit`-byte units. Writes to `to` the `bytes` bytes that the run's
// reversed form holds at [data, data + bytes). Reads all of every unit
// that range touches, so bytes before `data` (phase of them) and after
// its end up to the end of the last unit must be readable. unit <= 1:
// a plain copy.
void copy_reversing_units(const char* data, std::int64_t bytes, std::int64_t unit,
                          std::int64_t phase, char* to);

}  // namespace flowio::core
