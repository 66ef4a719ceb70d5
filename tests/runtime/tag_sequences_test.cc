// TagSequences alone: numbers in call order, and never a number whose tag
// bits an operation still live holds.
#include "runtime/tag_sequences.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

using flowio::runtime::kSequencesApart;
using flowio::runtime::TagSequences;

// Numbers come in call order, and ended operations free their bits at once.
TEST_CASE("Runtime.TagSequences.CallOrder") {
  TagSequences sequences;
  for (std::uint64_t expected = 0; expected < 3 * kSequencesApart; ++expected) {
    const std::uint64_t sequence = sequences.take();
    CHECK(sequence == expected);
    sequences.end(sequence);
  }
}

// With kSequencesApart operations live, the next one (the same tag bits
// as the oldest) waits until the oldest ends, and only that one.
TEST_CASE("Runtime.TagSequences.WaitsForTheOperationWithTheSameTags") {
  TagSequences sequences;
  for (std::uint64_t i = 0; i < kSequencesApart; ++i) sequences.take();
  // Ending others than the oldest does not let it through.
  sequences.end(1);
  sequences.end(kSequencesApart - 1);
  std::atomic<bool> taken{false};
  std::uint64_t sequence = 0;
  std::thread caller([&] {
    sequence = sequences.take();
    taken = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(taken.load());
  sequences.end(0);
  caller.join();
  CHECK(taken.load());
  CHECK(sequence == kSequencesApart);
  // Its successor's bits (those of operation 1) were freed already.
  CHECK(sequences.take() == kSequencesApart + 1);
}
