#include "sync/waitlist.h"

namespace flowio::sync {

int next_waiter(std::uint64_t waiting, int rank, int ranks) {
  for (int step = 1; step < ranks; ++step) {
    const int candidate = (rank + step) % ranks;
    if (waiting & waitlist_bit(candidate)) return candidate;
  }
  return -1;
}

}  // namespace flowio::sync
