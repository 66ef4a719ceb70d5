// Tables of an enumeration's values and their names, one table serving
// both directions: the name of a value, for statistics and reports, and
// the value a hint names, with an error that lists every name when it
// names none.
//
//   constexpr std::pair<Mode, const char*> kModeNames[] = {{Mode::off, "off"}, ...};
//   name_of(kModeNames, Mode::off)                       // "off"
//   value_named(kModeNames, "on", "hint flowio_mode")    // Mode::on
#pragma once

#include <cstddef>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>

#include "flowio/error.h"

namespace flowio::core {

template <typename Enum>
using ValueName = std::pair<Enum, const char*>;

// The name of `value`, or "?" when the table lacks it.
template <typename Enum, std::size_t N>
constexpr const char* name_of(const ValueName<Enum> (&names)[N], Enum value) noexcept {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "?";
}

// The value named `name`. Throws UsageError(invalid_argument) otherwise,
// located at `where` (the caller, not this header): "WHAT: expected a, b
// or c, got "name"".
template <typename Enum, std::size_t N>
Enum value_named(const ValueName<Enum> (&names)[N], std::string_view name, const std::string& what,
                 std::source_location where = std::source_location::current()) {
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i].second == name) return names[i].first;
    expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].second);
  }
  throw UsageError(ErrorCode::invalid_argument,
                   what + ": expected " + expected + ", got \"" + std::string(name) + "\"", where);
}

}  // namespace flowio::core
