// Where flowio's fcntl byte-range locks of a file lie. Locks of the file's
// bytes (MPI-IO atomic mode through fcntl, sync/fcntl_lock.h) stay below
// kSieveLockBase, even when they reach "to the end of the file"; sieve
// locks (io/sieve_lock.h) lie at kSieveLockBase + the extent they guard.
// So neither kind waits for the other, also when one process holds both.
#pragma once

#include <cstdint>

namespace flowio::core {

inline constexpr std::int64_t kSieveLockBase = std::int64_t{1} << 62;

}  // namespace flowio::core
