// copy_bytes: memcpy for the large copies of file data (a rank's part
// loaded from or stored into the kept mapping, a window's staging, packed
// pieces), which on x86-64 processors with fast string copies (ERMS) goes
// through one `rep movsb` above kBulkCopyFromBytes.
//
// Why: glibc 2.36 copies with `rep movsb` only up to the size of the L2
// cache on AMD processors (1 MiB here) and with a vector loop above it,
// which this machine (AMD EPYC, ERMS and FSRM) runs slower than the
// string instruction. Measured (medians of 401, 2 MiB, buffer just
// written): loads from a mapped file 41 us with memcpy, 36 with
// `rep movsb`, 40 with pread, whose kernel copy is a `rep movsb` per page;
// 8 MiB 175 / 147, stores into mapped pages 8 MiB 228 / 173. Below
// kBulkCopyFromBytes, memcpy (it already uses the string instruction where
// that pays).
#pragma once

#include <cstddef>
#include <cstring>

namespace flowio::core {

inline constexpr std::size_t kBulkCopyFromBytes = std::size_t{64} << 10;

// Whether this processor reports enhanced `rep movsb` (CPUID.7.0:EBX.9);
// asked once, at load time.
extern const bool string_copies_are_fast;

// memcpy(to, from, bytes): the ranges must not overlap.
inline void copy_bytes(void* to, const void* from, std::size_t bytes) {
#if defined(__x86_64__)
  if (bytes >= kBulkCopyFromBytes && string_copies_are_fast) {
    asm volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(bytes) : : "memory");
    return;
  }
#endif
  std::memcpy(to, from, bytes);
}

}  // namespace flowio::core
