#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_input.h"

namespace flowio::fuzz {

void finding(const char* what) {
  std::fprintf(stderr, "flowio fuzz finding: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace flowio::fuzz
