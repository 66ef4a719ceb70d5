// What the stage tests share: the access every process makes (blocks of
// its own interleaved with the others'), the hints that choose the call's
// route, and the write of the pattern most of them walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flowio/hints.h"
#include "tests/stages/stage_harness.h"

namespace flowio::testing {

inline constexpr std::int64_t kBlockBytes = 64;
inline constexpr int kBlocks = 8;
inline constexpr std::int64_t kProcessBytes = kBlockBytes * kBlocks;

// Every part through the aggregators, or every process its own part.
inline const Hints kTwoPhase{{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}};
inline const Hints kDirect{{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}};

// What the file holds once every one of `ranks` processes wrote its
// pattern() through the interleaved view.
std::vector<std::byte> interleaved_file(int ranks);

// This process's part of a collective write of its pattern() through the
// interleaved view under `hints`, on `harness`'s file, for the test to walk
// stage by stage (`runs_inline` as StageWalk's). `data`, the bytes the
// request points at, lives as long as the walk.
struct PatternWrite {
  PatternWrite(StageHarness& harness, const Hints& hints, bool runs_inline = true);
  std::vector<std::byte> data;
  StageWalk walk;
};

}  // namespace flowio::testing
