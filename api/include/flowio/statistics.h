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
                                 // "compress", "exchange", "decompress", "io",
                                 // "unpack", "agree"
  double seconds = 0;            // time spent in the stage (summed over iterations)
  std::int64_t bytes = 0;        // bytes the stage moved (packed, sent+received, read/written)
  std::int64_t messages = 0;     // MPI messages sent and received
  std::int64_t io_requests = 0;  // file requests (reads and writes) issued by window
                                 // I/O (not counted in direct mode)
};

// How many messages this process sent compressed or raw, and why (the
// adaptive rule's reasons; api hints flowio_compress and
// flowio_compress_min_bytes).
struct CompressionDecisions {
  std::int64_t compressed = 0;        // sent compressed (forced on, or the rule
                                      // predicted a saving)
  std::int64_t not_shrinking = 0;     // compressed, but the result was not
                                      // smaller, so sent raw
  std::int64_t forced_off = 0;        // flowio_compress=off
  std::int64_t too_small = 0;         // below flowio_compress_min_bytes
  std::int64_t unmeasured_link = 0;   // auto: the link to the peer not yet
                                      // measured (this message measures it)
  std::int64_t fast_link = 0;         // auto: the link outruns the codec
  std::int64_t no_saving = 0;         // auto: a sample showed compression would
                                      // not save time (poor ratio, slow codec)
  std::int64_t no_gain_observed = 0;  // auto: exchange stages that went
                                      // compressed were slower than raw ones
  std::int64_t probes = 0;            // auto: messages sent the other way than the rule's
                                      // current choice, to measure again (also counted
                                      // in compressed when compressed)
};

// Compression of the data and metadata this process exchanged in one
// operation (LZO1X-1; all zero when compression was off).
struct CompressionStatistics {
  std::string mode;                    // "off", "on" or "auto"; "" if unused
  std::int64_t data_bytes_in = 0;      // data message bytes sent, before
  std::int64_t data_bytes_out = 0;     // and as sent (frame headers included)
  std::int64_t metadata_bytes_in = 0;  // the same for metadata messages
  std::int64_t metadata_bytes_out = 0;
  std::int64_t received_bytes_in = 0;   // frame bytes received
  std::int64_t received_bytes_out = 0;  // what they decoded to
  double compress_seconds = 0;          // compressing, samples included
  double sample_seconds = 0;            // of which sampling
  double decompress_seconds = 0;
  CompressionDecisions decisions;
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
  std::string realm_policy;     // "even", "aligned", "persistent", "load_balanced",
                                // "datatype"
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
  CompressionStatistics compression;
};

}  // namespace flowio
