// FuzzInput: the fuzzer's bytes read as small decisions, so that a few bytes
// describe a whole input (a type tree, a list of hints). Reading past the
// end yields zeros, so every byte string is some input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace flowio::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return position_ >= size_; }

  std::uint8_t byte() { return position_ < size_ ? data_[position_++] : 0; }

  // An integer in [low, high], from one or two bytes.
  std::int64_t in_range(std::int64_t low, std::int64_t high) {
    const std::uint64_t span = static_cast<std::uint64_t>(high - low) + 1;
    std::uint64_t value = byte();
    if (span > 256) value = value << 8 | byte();
    return low + static_cast<std::int64_t>(value % span);
  }

  // A 64-bit word: mostly small values (where the interesting boundaries
  // are), sometimes any value.
  std::int64_t word() {
    const std::uint8_t kind = byte();
    if (kind < 192) return static_cast<std::int64_t>(kind) - 64;
    if (kind < 224) return in_range(-70000, 70000);
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | byte();
    return static_cast<std::int64_t>(value);
  }

  // Up to `most` bytes as text.
  std::string text(std::size_t most) {
    const std::size_t length = static_cast<std::size_t>(in_range(0, static_cast<std::int64_t>(most)));
    std::string out;
    for (std::size_t i = 0; i < length && !empty(); ++i) out.push_back(static_cast<char>(byte()));
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t position_ = 0;
};

// Stops the fuzzer with a message: a finding, not a rejected input.
[[noreturn]] void finding(const char* what);

}  // namespace flowio::fuzz
