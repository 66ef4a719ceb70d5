// The window pipeline (collective_stages.h), per window of this aggregator:
// read -> compress -> exchange -> decompress -> write.
#pragma once

#include "runtime/collective_stages.h"

namespace flowio::runtime {

const Pipeline& window_pipeline();

}  // namespace flowio::runtime
