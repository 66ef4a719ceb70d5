// LockSettings: which lock serves atomic mode, from the hints
//   flowio_lock         "hybrid" (default), "one_sided", "mcs" or "fcntl";
//   flowio_lock_ranges  "enable" (default): lock the bytes an access covers,
//                       so disjoint accesses proceed together; "disable":
//                       lock the whole file for every access.
// and make_lock(), which builds it. The defaults are bench/locks'
// measurements (6ba8c59:bench/README.md).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "flowio/hints.h"
#include "sync/lock.h"
#include "sync/progress_port.h"

namespace flowio::sync {

enum class LockAlgorithm { hybrid, one_sided, mcs, fcntl };

// "hybrid", "one_sided", "mcs", "fcntl".
const char* lock_algorithm_name(LockAlgorithm algorithm);

struct LockSettings {
  LockAlgorithm algorithm = LockAlgorithm::hybrid;
  bool ranges = true;

  // Throws UsageError(invalid_argument) for a value it does not know.
  static LockSettings from_hints(const Hints& hints);
  // flowio_lock and flowio_lock_ranges as they read in hints.
  void describe(Hints& hints) const;
};

// Collective over `comm`: builds the lock `settings` describe, with its
// shared words on rank 0, after agreeing on rank 0's settings (every
// process gets the same lock). The one-sided and hybrid waitlists hold 64
// processes: on more, those settings give the MCS lock. `settings` is
// updated to what was built. fcntl locks open `path`.
std::unique_ptr<Lock> make_lock(LockSettings& settings, MPI_Comm comm, const std::string& path,
                                ProgressPort& progress);

}  // namespace flowio::sync
