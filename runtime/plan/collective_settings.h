// CollectiveSettings: the hints that shape a collective operation, parsed
// once per call (hints are documented in api/include/flowio/hints.h).
#pragma once

#include <cstdint>
#include <vector>

#include "exchange/compression_rule.h"
#include "flowio/hints.h"
#include "io/window_io.h"
#include "runtime/core/realm_policy.h"
#include "runtime/core/realm_tiling.h"

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
  // flowio_compress, flowio_compress_min_bytes: compression of the data
  // exchanged point to point (not in Alltoallw rounds, not in direct mode).
  exchange::CompressionSettings compression;
  // romio_no_indep_rw: the program's promise that it makes no independent
  // accesses, with which ROMIO opens the file on its aggregators only.
  // flowio opens it on every process in one step anyway, so the promise
  // changes nothing here; it is reported (File::hints) for programs and
  // hints files written for ROMIO.
  bool no_independent_accesses = false;

  // Reads the hints for a write or a read on a communicator of `ranks`
  // processes. Throws UsageError(invalid_hint), naming the hint, for a
  // value of a hint flowio knows that it cannot use: not a number where one
  // is expected, out of range (negative sizes; more than 1 TiB, 1024
  // buffers in flight, 1 GiB for flowio_direct_threshold and
  // ind_rd_buffer_size / ind_wr_buffer_size), an unknown
  // keyword, a rank outside the communicator. Hints flowio does not know
  // are ignored. cb_buffer_size above 1 GiB is taken as 1 GiB.
  // `file_realms`: realms the program described for the file
  // (File::set_file_realms), which take the place of every realm hint;
  // UsageError(invalid_argument) when they do not fit the aggregator count.
  static CollectiveSettings from_hints(const Hints& hints, int ranks, bool writing,
                                       const core::RealmDescription* file_realms = nullptr);
};

}  // namespace flowio::runtime
