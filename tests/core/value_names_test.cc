// The tables of value names (runtime/core/value_names.h): each direction
// of a table, the "?" for a value the table lacks, and the error that
// lists every accepted name; and the tables of the hints that use them,
// read through their parsers.
#include "runtime/core/value_names.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "flowio/error.h"
#include "runtime/core/realm_policy.h"

namespace {

using namespace flowio::core;

enum class Colour { red, green, blue, unnamed };

constexpr ValueName<Colour> kColourNames[] = {
    {Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}};

// The message of the UsageError that value_named throws for `name` (what()
// up to its " [code] at file:line" tail), or "" when it throws none. The
// error is located at this caller, not in the header.
std::string refusal(std::string_view name) {
  try {
    value_named(kColourNames, name, "hint colour");
  } catch (const flowio::UsageError& error) {
    CHECK(error.code() == flowio::ErrorCode::invalid_argument);
    CHECK(std::string(error.where().file_name()).ends_with("value_names_test.cc"));
    const std::string text = error.what();
    return text.substr(0, text.find(" ["));
  }
  return "";
}

}  // namespace

// Every value's name, and "?" for the one the table lacks.
TEST_CASE("Core.ValueNames.NameOfEachValue") {
  CHECK(std::string(name_of(kColourNames, Colour::red)) == "red");
  CHECK(std::string(name_of(kColourNames, Colour::green)) == "green");
  CHECK(std::string(name_of(kColourNames, Colour::blue)) == "blue");
  CHECK(std::string(name_of(kColourNames, Colour::unnamed)) == "?");
  static_assert(name_of(kColourNames, Colour::blue)[0] == 'b', "usable in constant expressions");
}

// Each name gives back its value: the two directions agree.
TEST_CASE("Core.ValueNames.ValueOfEachName") {
  for (const auto& [value, name] : kColourNames) {
    CAPTURE(name);
    CHECK(value_named(kColourNames, name, "hint colour") == value);
  }
}

// An unknown name (a prefix, another case, the empty string) is refused
// with every accepted name in the message, the last after "or".
TEST_CASE("Core.ValueNames.UnknownNameListsEveryName") {
  for (const std::string name : {"re", "Red", "", "purple"}) {
    CAPTURE(name);
    CHECK(refusal(name) == "hint colour: expected red, green or blue, got \"" + name + "\"");
  }
  CHECK(refusal("green").empty());
}

// A parser built on a table: the realm policy's names read back as the
// policies they name, and a wrong one names the hint.
TEST_CASE("Core.ValueNames.RealmPolicyRoundTrip") {
  for (const RealmPolicy policy : {RealmPolicy::even, RealmPolicy::aligned, RealmPolicy::persistent,
                                   RealmPolicy::load_balanced, RealmPolicy::datatype}) {
    CHECK(parse_realm_policy(realm_policy_name(policy)) == policy);
  }
  CHECK_THROWS_WITH_AS(parse_realm_policy("balanced"),
                       doctest::Contains("flowio_realm_policy: expected even, aligned"),
                       flowio::UsageError);
}
