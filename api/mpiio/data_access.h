// One data call of the MPI-IO interface (read or write; independent or
// collective; at an explicit offset, at the individual file pointer or at
// the shared one) carried out on a LayerFile's flowio::File.
//
// Atomic mode is flowio::File's (File::set_atomicity): the calls are made
// alike in it.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "api/layer_hooks.h"
#include "flowio/future.h"

namespace flowio::mpiio {

struct LayerFile;

using Position = LayerHooks::Position;
using DataCall = LayerHooks::DataCall;

// Checks the call (UsageError when bad) and carries it out, returning the
// bytes moved when it is done.
std::size_t run_to_completion(LayerFile& file, const DataCall& call);

// Checks the call (UsageError when bad) and starts it.
Future<std::size_t> start(LayerFile& file, const DataCall& call);

}  // namespace flowio::mpiio
