// Hints: string key/value pairs, as MPI_Info carries them. Unknown keys are
// ignored, as MPI says. Keys flowio reads today:
//   flowio_io_backend   "auto" (default), "io_uring" or "posix": the storage
//                       backend (the environment variable FLOWIO_IO_BACKEND
//                       overrides "auto").
#pragma once

#include <map>
#include <string>

namespace flowio {

using Hints = std::map<std::string, std::string>;

}  // namespace flowio
