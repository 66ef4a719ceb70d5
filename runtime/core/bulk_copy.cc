#include "runtime/core/bulk_copy.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace flowio::core {
namespace {

bool reports_enhanced_string_copies() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ebx & (1u << 9)) != 0;
#else
  return false;
#endif
}

}  // namespace

const bool string_copies_are_fast = reports_enhanced_string_copies();

}  // namespace flowio::core
