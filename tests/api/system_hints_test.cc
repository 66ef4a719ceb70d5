// The system hints file's parser, as pure logic: the lines it takes, the
// ones it skips silently (blank, comments) and the ones it ignores and
// reports (not two words, a key set again).
#include "api/system_hints.h"

#include <doctest/doctest.h>

#include <string>

namespace {

using flowio::parse_system_hints;
using flowio::SystemHints;

bool mentions(const std::string& problem, const std::string& text) {
  return problem.find(text) != std::string::npos;
}

}  // namespace

// "key value" lines, with spaces, tabs or a Windows line end between and
// around the words, become hints.
TEST_CASE("Api.SystemHints.TakesKeyValueLines") {
  const SystemHints parsed =
      parse_system_hints("cb_buffer_size 1048576\n\tromio_cb_read\tenable \r\ncb_nodes  2");
  CHECK(parsed.problems.empty());
  REQUIRE(parsed.hints.size() == 3);
  CHECK(parsed.hints.at("cb_buffer_size") == "1048576");
  CHECK(parsed.hints.at("romio_cb_read") == "enable");
  CHECK(parsed.hints.at("cb_nodes") == "2");
}

// Blank lines and comments are no problem; '#' only starts a comment at
// the start of a line's first word.
TEST_CASE("Api.SystemHints.SkipsCommentsAndBlankLines") {
  const SystemHints parsed =
      parse_system_hints("# a comment with words\n\n   \n  #indented\nkey v#1\n");
  CHECK(parsed.problems.empty());
  REQUIRE(parsed.hints.size() == 1);
  CHECK(parsed.hints.at("key") == "v#1");
}

// A line of one word or of three is ignored and reported with its number;
// the lines around it still count.
TEST_CASE("Api.SystemHints.ReportsMalformedLines") {
  const SystemHints parsed = parse_system_hints("first 1\nlonely\nthree words here\nlast 2\n");
  CHECK(parsed.hints.size() == 2);
  CHECK(parsed.hints.at("first") == "1");
  CHECK(parsed.hints.at("last") == "2");
  REQUIRE(parsed.problems.size() == 2);
  CHECK(mentions(parsed.problems[0], "line 2"));
  CHECK(mentions(parsed.problems[0], "lonely"));
  CHECK(mentions(parsed.problems[1], "line 3"));
  CHECK(mentions(parsed.problems[1], "3 words"));
}

// A key set twice keeps its first value (as ROMIO reads such files), and
// the second line is reported.
TEST_CASE("Api.SystemHints.FirstValueOfARepeatedKeyStays") {
  const SystemHints parsed = parse_system_hints("ind_rd_buffer_size 49\nind_rd_buffer_size 60\n");
  CHECK(parsed.hints.at("ind_rd_buffer_size") == "49");
  REQUIRE(parsed.problems.size() == 1);
  CHECK(mentions(parsed.problems[0], "line 2"));
  CHECK(mentions(parsed.problems[0], "49"));
}

// An empty text gives nothing and no problem.
TEST_CASE("Api.SystemHints.EmptyText") {
  const SystemHints parsed = parse_system_hints("");
  CHECK(parsed.hints.empty());
  CHECK(parsed.problems.empty());
}
