// The whole collective write of bench/compress: each rank's mesh nodes
// written with write_at_all through an hindexed view, two-phase forced
// (romio_cb_write=enable, cb_buffer_size as the harness's window), by
// flowio once per compression mode (flowio_compress, each mode its own
// file, opened once, so that the rule learns across calls as in a
// time-stepping code) and by MPICH's MPI-IO, calls interleaved.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/compress_mesh.h"
#include "flowio/file.h"

namespace bench::compress {

class WholeWrites {
 public:
  // Opens the files under `dir` (collective). Borrows `mesh`.
  WholeWrites(const Mesh& mesh, const std::vector<std::string>& modes, const std::string& dir,
              std::int64_t window_bytes);
  WholeWrites(const WholeWrites&) = delete;
  WholeWrites& operator=(const WholeWrites&) = delete;

  // One write with each, in a rotating order (collective); timed unless
  // `warm_up`.
  void write(bool warm_up, int rotation);
  // Closes the files (collective).
  void close();

  // Prints a line per flowio mode and one for MPICH (median seconds of
  // the timed writes, MiB/s, MPICH's time over flowio's) with flowio's
  // exchange statistics: the exchange stage's seconds (slowest rank,
  // median), the bytes sent over the bytes packed, and the messages
  // compressed per write (all ranks). Collective.
  void report(Report& report, const Fields& fields) const;

  // The files written: flowio's, one per mode, then MPICH's.
  std::vector<std::string> paths() const;

 private:
  const Mesh& mesh_;
  std::vector<std::string> modes_;
  std::vector<std::byte> local_;
  std::optional<Datatype> view_;
  std::vector<ScratchFile> paths_;  // per mode, then MPICH's
  std::map<std::string, std::optional<flowio::File>> flowio_;
  std::optional<MpiFile> mpich_;
  std::map<std::string, std::vector<double>> seconds_;  // per mode, and "mpich"
  std::map<std::string, std::vector<flowio::OperationStatistics>> statistics_;
  std::map<std::string, std::size_t> warm_ups_;  // untimed writes per mode
};

}  // namespace bench::compress
