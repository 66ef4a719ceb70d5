// The round pipeline (collective_stages.h), per Alltoallw round, in order:
// prepare -> exchange -> finish.
#pragma once

#include "runtime/collective_stages.h"

namespace flowio::runtime {

const Pipeline& round_pipeline();

}  // namespace flowio::runtime
