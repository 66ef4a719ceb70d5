#include "runtime/core/byte_order.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace flowio::core {
namespace {

void reverse_units_scalar(std::int64_t unit, const char* from, char* to, std::int64_t count) {
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

#if defined(__x86_64__)
// The shuffle that reverses each unit of a 16-byte lane: lane byte i
// takes byte start + unit - 1 - (i - start) of its unit.
struct LaneOrder {
  alignas(16) char bytes[16];
};
constexpr LaneOrder lane_order(int unit) {
  LaneOrder order{};
  for (int i = 0; i < 16; ++i)
    order.bytes[i] = static_cast<char>(i / unit * unit + unit - 1 - i % unit);
  return order;
}
constexpr LaneOrder kLaneOrders[] = {lane_order(2), lane_order(4), lane_order(8), lane_order(16)};

// One byte shuffle reverses every unit of a 16-byte lane, since each unit
// size divides 16: the scalar loop stores a unit at a time (8 bytes at
// most), which made an aggregator's conversion of 64-byte pieces into the
// file's pages take 1.6-1.7 times memcpy's time; 32-byte shuffles take
// about memcpy's (6ba8c59:bench/README.md, "external32 against native", w38).
// Built for AVX2 whatever the compiler's target, and called only where
// the processor has it.
__attribute__((target("avx2"))) void reverse_units_avx2(std::int64_t unit, const char* from,
                                                        char* to, std::int64_t count) {
  const int which = unit == 2 ? 0 : unit == 4 ? 1 : unit == 8 ? 2 : 3;
  const __m128i order = _mm_load_si128(reinterpret_cast<const __m128i*>(kLaneOrders[which].bytes));
  const __m256i orders = _mm256_broadcastsi128_si256(order);
  const std::int64_t bytes = unit * count;
  std::int64_t done = 0;
  for (; done + 32 <= bytes; done += 32) {
    const __m256i data = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + done));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + done), _mm256_shuffle_epi8(data, orders));
  }
  if (done + 16 <= bytes) {
    const __m128i data = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + done));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + done), _mm_shuffle_epi8(data, order));
    done += 16;
  }
  if (done < bytes) reverse_units_scalar(unit, from + done, to + done, (bytes - done) / unit);
}

// reverse_units_avx2 with non-temporal stores, `to` unit-aligned: the
// head up to the first 32-byte boundary (whole units, since each unit
// size divides 32) and the tail by reverse_units_avx2.
__attribute__((target("avx2"))) void reverse_units_streaming(std::int64_t unit, const char* from,
                                                             char* to, std::int64_t count) {
  const int which = unit == 2 ? 0 : unit == 4 ? 1 : unit == 8 ? 2 : 3;
  const __m256i orders = _mm256_broadcastsi128_si256(
      _mm_load_si128(reinterpret_cast<const __m128i*>(kLaneOrders[which].bytes)));
  const std::int64_t bytes = unit * count;
  const auto misalignment = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(to) & 31);
  const std::int64_t head = std::min(bytes, misalignment == 0 ? 0 : 32 - misalignment);
  if (head > 0) reverse_units_avx2(unit, from, to, head / unit);
  std::int64_t done = head;
  for (; done + 32 <= bytes; done += 32) {
    const __m256i data = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + done));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(to + done), _mm256_shuffle_epi8(data, orders));
  }
  // Later ordinary stores (and other threads reading these bytes after a
  // release) must see the streamed ones.
  _mm_sfence();
  if (done < bytes) reverse_units_avx2(unit, from + done, to + done, (bytes - done) / unit);
}

bool processor_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

// Set when the library loads, not on first use: the guard of a local
// static gave every call a prologue, which made a loop converting 64-byte
// pieces a quarter slower or more. A call from another library's static
// initialiser before this one ran takes the scalar loop: slower, the same
// bytes.
const bool processor_avx2 = processor_has_avx2();
#endif

}  // namespace

void reverse_units(std::int64_t unit, const char* from, char* to, std::int64_t count) {
#if defined(__x86_64__)
  // Runs shorter than one 32-byte shuffle: a few scalar units.
  if (processor_avx2 && unit * count >= 32) return reverse_units_avx2(unit, from, to, count);
#endif
  reverse_units_scalar(unit, from, to, count);
}

void reverse_units_uncached(std::int64_t unit, const char* from, char* to, std::int64_t count) {
#if defined(__x86_64__)
  if (processor_avx2 &&
      reinterpret_cast<std::uintptr_t>(to) % static_cast<std::uintptr_t>(unit) == 0)
    return reverse_units_streaming(unit, from, to, count);
#endif
  reverse_units(unit, from, to, count);
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
