// A window's file I/O on its aggregator, for the window and round
// pipelines (stages.h): the window's pieces from the file into
// its buffer, or from the buffer into the file, by the method
// io/window_io.h chooses, recorded in the operation's statistics. Failures
// are kept in the operation.
#pragma once

#include <cstddef>

#include "runtime/stages/operation.h"

namespace flowio::runtime {

// Writes window `w` of the operation's plan from its buffer (nothing once
// the operation failed: the file stays as it was).
void write_window(Operation& op, std::size_t w);
// Reads window `w` into its buffer, and counts each client's part before
// end of file (WindowRun::before_end).
void read_window(Operation& op, std::size_t w);

}  // namespace flowio::runtime
