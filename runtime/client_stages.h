// The client pipeline (collective_stages.h), per message to an aggregator:
// pack -> compress -> exchange -> decompress -> unpack; in a data
// representation other than native, convert -> compress -> exchange ->
// decompress -> convert back.
#pragma once

#include "runtime/collective_stages.h"

namespace flowio::runtime {

const Pipeline& client_pipeline();
const Pipeline& client_converted_pipeline();

}  // namespace flowio::runtime
