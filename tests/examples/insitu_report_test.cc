// The in-situ demo's options and verdict: what a user reads off the main
// job must follow from the figures, and a bad option must be an error.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "examples/insitu_options.h"
#include "examples/insitu_report.h"

namespace {

using insitu::Verdict;

insitu::ParsedInsituOptions parse(std::vector<std::string> words) {
  words.insert(words.begin(), "insitu");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  return insitu::parse_insitu_options(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

// Both spellings of an option work, and every option reaches its field.
TEST_CASE("Examples.InsituOptions.EveryOptionIsRead") {
  const insitu::ParsedInsituOptions parsed =
      parse({"--mib=16", "--rounds", "3", "--steps=2", "--sweeps=7", "--durable=0", "--direct=0",
             "--decomposition=blocks", "--dir=/tmp", "--trace=t.json"});
  REQUIRE(parsed.options);
  const insitu::InsituOptions& options = *parsed.options;
  CHECK(options.mib == 16);
  CHECK(options.rounds == 3);
  CHECK(options.steps == 2);
  CHECK(options.sweeps == 7);
  CHECK_FALSE(options.durable);
  CHECK_FALSE(options.direct);
  CHECK(options.decomposition == insitu::Decomposition::blocks);
  CHECK(options.dir == "/tmp");
  CHECK(options.trace == "t.json");
}

// A misspelt option, a value out of range or of the wrong kind ends with
// exit code 2 and says why; --help ends with 0 and lists the options.
TEST_CASE("Examples.InsituOptions.BadOptionsAreErrors") {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"--step=2"},
                                             {"--steps=0"},
                                             {"--mib=many"},
                                             {"--decomposition=cubes"},
                                             {"--dir=/no/such/directory"}}) {
    CAPTURE(words.front());
    const insitu::ParsedInsituOptions parsed = parse(words);
    CHECK_FALSE(parsed.options);
    CHECK(parsed.exit_code == 2);
    CHECK_FALSE(parsed.message.empty());
  }
  const insitu::ParsedInsituOptions help = parse({"--help"});
  CHECK_FALSE(help.options);
  CHECK(help.exit_code == 0);
  CHECK(help.message.find("--rounds") != std::string::npos);
}

// A winner is named only when the median round is beyond the margin and
// three rounds in four agree: one disturbed round in five cannot turn the
// verdict, two can.
TEST_CASE("Examples.InsituReport.VerdictNeedsMostRounds") {
  CHECK(insitu::verdict_of({2.0, 1.5, 3.0}) == Verdict::flowio_faster);
  CHECK(insitu::verdict_of({0.5, 0.4, 0.6}) == Verdict::mpich_faster);
  CHECK(insitu::verdict_of({2.0, 0.9, 3.0, 2.5, 1.8}) == Verdict::flowio_faster);
  CHECK(insitu::verdict_of({2.0, 0.9, 3.0, 0.8, 1.8}) == Verdict::no_clear_difference);
  CHECK(insitu::verdict_of({0.5, 1.2, 0.6, 0.4, 0.7}) == Verdict::mpich_faster);
  // Within the margin, whatever the share.
  CHECK(insitu::verdict_of({1.04, 1.03, 1.04}) == Verdict::no_clear_difference);
  CHECK(insitu::verdict_of({0.97, 0.98}) == Verdict::no_clear_difference);
  // Two rounds: both must agree.
  CHECK(insitu::verdict_of({2.0, 1.0}) == Verdict::no_clear_difference);
}

// The spread of the samples: their median and range.
TEST_CASE("Examples.InsituReport.SpreadIsMedianAndRange") {
  const insitu::Spread spread = insitu::spread_of({3.0, 1.0, 2.0, 10.0});
  CHECK(spread.median == doctest::Approx(2.5));
  CHECK(spread.low == 1.0);
  CHECK(spread.high == 10.0);
}
