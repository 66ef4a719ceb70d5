#include "tests/stages/stage_test_cases.h"

#include <algorithm>

#include "tests/support/world.h"

namespace flowio::testing {

std::vector<std::byte> interleaved_file(int ranks) {
  std::vector<std::byte> file(static_cast<std::size_t>(kProcessBytes * ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    const std::vector<std::byte> data = pattern(rank, kProcessBytes);
    for (int block = 0; block < kBlocks; ++block) {
      std::copy_n(data.begin() + block * kBlockBytes, kBlockBytes,
                  file.begin() + (static_cast<std::int64_t>(block) * ranks + rank) * kBlockBytes);
    }
  }
  return file;
}

PatternWrite::PatternWrite(StageHarness& harness, const Hints& hints, bool runs_inline)
    : data(pattern(world_rank(), kProcessBytes)),
      walk(harness, harness.request(true, kBlockBytes, kBlocks, data.data(), hints), runs_inline) {}

}  // namespace flowio::testing
