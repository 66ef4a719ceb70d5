// What the stage tests share: the access every process makes (blocks of
// its own interleaved with the others') and the hints that choose the
// call's route.
#pragma once

#include <cstdint>
#include <vector>

#include "flowio/hints.h"

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

}  // namespace flowio::testing
