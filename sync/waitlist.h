// The waitlist of the seed paper's one-sided and hybrid algorithms (Ross et
// al., "Implementing MPI-IO Atomic Mode Without File System Support"): one
// entry per process, set while the process holds or waits for the lock.
// Here the entries are the bits of one 64-bit word, so that "set my entry
// and read the others" is one atomic fetch-and-or (the paper's exclusive
// access epoch) and "clear mine and read the others" one fetch-and-and.
// MPI guarantees atomicity per element only, so the word bounds the
// processes to 64.
#pragma once

#include <cstdint>

namespace flowio::sync {

inline constexpr int kWaitlistMaxProcesses = 64;

constexpr std::uint64_t waitlist_bit(int rank) { return std::uint64_t{1} << rank; }

// The process that gets the lock when `rank` releases it: the first
// waiter after `rank` in rank order, wrapping around to 0 (the paper's
// fairness rule: every waiter is served within ranks - 1 hand-offs).
// `waiting` holds the bits of the other processes in the waitlist; -1 if
// it has none.
int next_waiter(std::uint64_t waiting, int rank, int ranks);

}  // namespace flowio::sync
