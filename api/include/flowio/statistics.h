// Statistics of one collective operation: what each stage of its flow graph
// did on this process, and which I/O method the aggregator chose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowio {

// One stage of a collective operation's flow graph on this process, summed
// over the buffer iterations.
struct StageStatistics {
  std::string name;              // "offsets", "realms", "metadata", "pack",
                                 // "exchange", "io", "unpack", "agree"
  double seconds = 0;            // time spent in the stage (summed over iterations)
  std::int64_t bytes = 0;        // bytes the stage moved (packed, sent+received, read/written)
  std::int64_t messages = 0;     // MPI messages sent and received
  std::int64_t io_requests = 0;  // file requests (reads and writes) issued by window
                                 // I/O (not counted in direct mode)
};

struct OperationStatistics {
  std::uint64_t sequence = 0;  // the file's collective operation number, from 0
  bool writing = false;
  std::int64_t bytes = 0;       // bytes of this process's data in the operation
  double seconds = 0;           // from the call to completion
  int aggregators = 0;          // processes that accessed the file (in direct mode,
                                // where each process accesses it itself: those with data)
  bool aggregator = false;      // whether this process was one of them
  std::int64_t iterations = 0;  // buffer iterations this process took part in
  std::string realm_policy;     // "even", "aligned", "persistent", "load_balanced"
  std::string method;           // this aggregator's I/O method(s): "contiguous",
                                // "sieve", "mapped" (sieving through a mapping
                                // of the file), "vectored", a mix as
                                // "mapped+vectored", or ""
  bool read_access = true;      // false when the file's permissions forbid reading
                                // it: no method that reads ("sieve", "mapped")
                                // could be used, windows with holes went "vectored"
  bool plan_reused = false;     // the plan compiled for an earlier call with the same
                                // accesses on every process was run again: no realm
                                // calc or metadata transfer
  std::string exchange;         // "point_to_point" or "alltoallw"
  std::vector<StageStatistics> stages;
};

}  // namespace flowio
