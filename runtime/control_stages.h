// The control pipeline (collective_stages.h), per operation in call order:
// realms -> metadata -> plan -> plan check (runtime/plan_check.h, for
// compiled plans); leaving it, the operation waits for the
// DataPhaseScheduler to start its data phase.
#pragma once

#include "runtime/collective_stages.h"

namespace flowio::runtime {

const Pipeline& control_pipeline();

}  // namespace flowio::runtime
