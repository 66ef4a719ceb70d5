// OperationRecorder: what one collective operation did on this process,
// stage by stage (time, bytes, messages, file requests), the I/O methods
// its windows used, and the trace spans (runtime/trace.h) when a trace is
// recorded. Stage names are those of File::statistics() and the trace.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "flowio/statistics.h"

namespace flowio::runtime {

enum class Stage { offsets, realms, metadata, pack, exchange, io, unpack, agree, count };
const char* stage_name(Stage stage);

// Thread safety: record() and add_method() may be called from any thread.
class OperationRecorder {
 public:
  // `label` names the operation in the trace ("write#12").
  OperationRecorder(int rank, std::string label) : rank_(rank), label_(std::move(label)) {}

  // One span of `stage` from `begin_ns` to now, for window (or round or
  // item) `index` (-1: the whole operation), with what it moved; `role`
  // is appended to the trace label.
  void record(Stage stage, std::int64_t begin_ns, std::int64_t index = -1, const char* role = "",
              std::int64_t bytes = 0, std::int64_t messages = 0, std::int64_t requests = 0);
  void add_method(const char* method);

  // The stages and methods, into `statistics`.
  void fill(OperationStatistics& statistics) const;

 private:
  struct Counters {
    std::atomic<std::int64_t> nanoseconds{0};
    std::atomic<std::int64_t> bytes{0};
    std::atomic<std::int64_t> messages{0};
    std::atomic<std::int64_t> io_requests{0};
  };

  int rank_;
  std::string label_;
  Counters stages_[static_cast<int>(Stage::count)];
  mutable std::mutex mutex_;  // methods_
  std::set<std::string> methods_;
};

}  // namespace flowio::runtime
