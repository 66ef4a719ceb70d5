// The agree pipeline (collective_stages.h), per operation: persist ->
// agree; leaving it, the operation completes.
#pragma once

#include "runtime/collective_stages.h"

namespace flowio::runtime {

const Pipeline& agree_pipeline();

}  // namespace flowio::runtime
