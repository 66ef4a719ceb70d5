// Trace: a Chrome / Perfetto JSON trace (chrome://tracing, ui.perfetto.dev)
// of the stages of collective operations, one track per stage per rank, so
// that the overlap of the pipeline can be seen. Enabled by the environment
// variable FLOWIO_TRACE=path; each File::close rewrites the file with every
// event recorded so far by any rank.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/engine/clock.h"

namespace flowio::runtime {

// Thread safety: record() may be called from any thread.
class Trace {
 public:
  // The process's trace.
  static Trace& process();

  bool enabled() const { return !path_.empty(); }
  // One span of a stage: `label` names the operation and iteration;
  // `args`, if not empty, the members of the event's "args" object
  // (`"bytes":4096,...`), which trace viewers show with the span.
  void record(const char* stage, int rank, const std::string& label, std::int64_t begin_ns,
              std::int64_t end_ns, const std::string& args = {});
  // Collective over `comm`: rank 0 collects every rank's events and
  // rewrites the trace file. Does nothing when tracing is off.
  void write(MPI_Comm comm);

 private:
  Trace();

  std::string path_;
  std::mutex mutex_;
  std::string events_;               // this rank's events, JSON objects joined by ",\n"
  std::vector<std::string> all_;     // rank 0: every rank's events, by rank
  std::vector<std::string> stages_;  // track names, by track id
};

}  // namespace flowio::runtime
