// The seed paper's fairness rule for the waitlist locks: the next holder is
// the first waiter after the releaser in rank order, wrapping around.
#include "sync/waitlist.h"

#include <doctest/doctest.h>

#include <vector>

using flowio::sync::next_waiter;
using flowio::sync::waitlist_bit;

namespace {

std::uint64_t bits(const std::vector<int>& ranks) {
  std::uint64_t word = 0;
  for (const int rank : ranks) word |= waitlist_bit(rank);
  return word;
}

}  // namespace

// Nobody else waits: no hand-off.
TEST_CASE("Sync.Waitlist.NobodyWaits") {
  CHECK(next_waiter(0, 0, 1) == -1);
  CHECK(next_waiter(0, 3, 8) == -1);
}

// The first waiter above the releaser goes next, not the lowest rank.
TEST_CASE("Sync.Waitlist.NextAboveReleaser") {
  CHECK(next_waiter(bits({0, 1, 5, 6}), 3, 8) == 5);
  CHECK(next_waiter(bits({4}), 3, 8) == 4);
}

// With no waiter above, the search wraps around to rank 0.
TEST_CASE("Sync.Waitlist.WrapsAround") {
  CHECK(next_waiter(bits({1, 2}), 6, 8) == 1);
  CHECK(next_waiter(bits({0}), 63, 64) == 0);
}

// Every waiter is served within ranks - 1 hand-offs when everybody waits
// all the time: the holders go round in rank order.
TEST_CASE("Sync.Waitlist.RoundRobinUnderFullContention") {
  const int ranks = 64;
  int holder = 17;
  std::vector<int> served(ranks, 0);
  for (int hand_off = 0; hand_off < 3 * ranks; ++hand_off) {
    const std::uint64_t everyone_else = ~std::uint64_t{0} & ~waitlist_bit(holder);
    const int next = next_waiter(everyone_else, holder, ranks);
    CHECK(next == (holder + 1) % ranks);
    holder = next;
    ++served[static_cast<std::size_t>(holder)];
  }
  for (const int count : served) CHECK(count == 3);
}
