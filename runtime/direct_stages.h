// The direct pipeline (collective_stages.h), per operation in direct mode:
// lock -> io, each process accessing its own pieces; leaving it, the
// operation goes to the agreement. access_file_directly
// (collective_stages.h) is defined here too.
#pragma once

#include "runtime/collective_stages.h"

namespace flowio::runtime {

const Pipeline& direct_pipeline();

}  // namespace flowio::runtime
