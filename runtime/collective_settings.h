// CollectiveSettings: the hints that shape a collective operation, parsed
// once per call (hints are documented in api/include/flowio/hints.h).
#pragma once

#include <cstdint>
#include <vector>

#include "flowio/hints.h"
#include "io/window_io.h"
#include "runtime/core/realm_policy.h"

namespace flowio::runtime {

struct CollectiveSettings {
  // romio_cb_write / romio_cb_read: enable = always two-phase I/O;
  // disable = each process accesses the file on its own; automatic = on its
  // own when every process's data is one contiguous piece or its pieces
  // are large (mean at least direct_threshold bytes), where gathering them
  // would only copy data twice, and two-phase otherwise.
  enum class Buffering { automatic, enable, disable };
  Buffering buffering = Buffering::automatic;
  std::int64_t direct_threshold = std::int64_t{1} << 20;
  core::RealmSettings realms;         // realms.slots == aggregator_ranks.size()
  std::vector<int> aggregator_ranks;  // slot -> rank
  int buffers_in_flight = 3;
  io::WindowIoSettings window_io;
  bool alltoallw = false;
  // flowio_plan_cache: compiled plans a file keeps for reuse (0: none).
  int plans_kept = 4;
  // flowio_durable: a collective write completes only once every process
  // that wrote has made the file's data durable (fdatasync), inside the
  // operation, so that a nonblocking write's sync overlaps computation.
  bool durable = false;

  // Reads the hints for a write or a read on a communicator of `ranks`
  // processes. Throws UsageError(invalid_argument) for a malformed value
  // of a hint flowio knows.
  static CollectiveSettings from_hints(const Hints& hints, int ranks, bool writing);
};

}  // namespace flowio::runtime
