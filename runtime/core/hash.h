// mix64 and hash_combine: the one 64-bit hash flowio uses, for cache keys
// (plans, realm tilings) and for data patterns whose words must look
// unrelated (benchmarks, tests).
#pragma once

#include <cstdint>

namespace flowio::core {

// splitmix64's output for state `x`: its finalizer, a bijection of 64 bits
// in which every input bit reaches every output bit, applied to x plus the
// golden-ratio increment, so that neighbouring inputs (0, 1, 2, ...) give
// unrelated words and 0 does not map to 0.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The running hash `hash` with `word` added. Order matters: a sequence of
// words combined one at a time gives a different hash from the same words
// in another order.
constexpr std::uint64_t hash_combine(std::uint64_t hash, std::uint64_t word) noexcept {
  return mix64(hash ^ word);
}

}  // namespace flowio::core
