// Trace: a Chrome / Perfetto JSON trace (chrome://tracing, ui.perfetto.dev)
// of the stages of collective operations, one track per stage per rank, so
// that the overlap of the pipeline can be seen, and of the files opened
// (name and hints in force). Enabled by the environment variable
// FLOWIO_TRACE=path; each File::close rewrites the file with every event
// recorded so far by any rank. The JSON is written by nlohmann-json, so
// any file name or hint value (quotes, backslashes, control characters,
// bytes that are not UTF-8, which become U+FFFD) gives a valid document.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace flowio::runtime {

// The members of a span's "args" object, which trace viewers show with the
// span: (name, value) pairs such as ("bytes", 4096).
using TraceArgs = std::vector<std::pair<const char*, std::int64_t>>;

// Thread safety: record() and record_open() may be called from any thread.
class Trace {
 public:
  // The process's trace.
  static Trace& process();

  bool enabled() const { return !path_.empty(); }
  // One span of a stage: `label` names the operation and iteration.
  void record(const char* stage, int rank, const std::string& label, std::int64_t begin_ns,
              std::int64_t end_ns, const TraceArgs& args = {});
  // An instant event: `rank` opened `path` with `hints` in force (the
  // settings of the spans that follow).
  void record_open(int rank, const std::string& path,
                   const std::map<std::string, std::string>& hints);
  // Collective over `comm`: rank 0 collects every rank's events and
  // rewrites the trace file. Does nothing when tracing is off.
  void write(MPI_Comm comm);

 private:
  struct Events;  // JSON arrays, in trace.cc (keeps the JSON library out of this header)

  Trace();
  ~Trace();
  // Appends `event` (a JSON object) to this rank's events. Called with
  // mutex_ held.
  template <typename Event>
  void append(Event&& event);

  std::string path_;
  std::mutex mutex_;
  std::unique_ptr<Events> events_;   // this rank's events since the last write; rank 0: all
  std::vector<std::string> stages_;  // track names, by track id
};

}  // namespace flowio::runtime
