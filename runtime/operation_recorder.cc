#include "runtime/operation_recorder.h"

#include "runtime/clock.h"
#include "runtime/trace.h"

namespace flowio::runtime {

const char* stage_name(Stage stage) {
  static const char* const kNames[] = {"offsets",  "realms", "metadata", "pack",
                                       "exchange", "io",     "unpack",   "agree"};
  return kNames[static_cast<int>(stage)];
}

void OperationRecorder::record(Stage stage, std::int64_t begin_ns, std::int64_t index,
                               const char* role, std::int64_t bytes, std::int64_t messages,
                               std::int64_t requests) {
  const std::int64_t end_ns = now_ns();
  // Relaxed: sums read only after the operation completes, which orders
  // them (the future's completion is a release).
  Counters& counters = stages_[static_cast<int>(stage)];
  counters.nanoseconds.fetch_add(end_ns - begin_ns, std::memory_order_relaxed);
  counters.bytes.fetch_add(bytes, std::memory_order_relaxed);
  counters.messages.fetch_add(messages, std::memory_order_relaxed);
  counters.io_requests.fetch_add(requests, std::memory_order_relaxed);
  Trace& trace = Trace::process();
  if (trace.enabled()) {
    trace.record(stage_name(stage), rank_,
                 label_ + (index >= 0 ? " w" + std::to_string(index) : "") + role, begin_ns,
                 end_ns);
  }
}

void OperationRecorder::add_method(const char* method) {
  std::lock_guard lock(mutex_);
  methods_.insert(method);
}

void OperationRecorder::fill(OperationStatistics& statistics) const {
  {
    std::lock_guard lock(mutex_);
    for (const std::string& method : methods_) {
      statistics.method += (statistics.method.empty() ? "" : "+") + method;
    }
  }
  for (int stage = 0; stage < static_cast<int>(Stage::count); ++stage) {
    const Counters& counters = stages_[stage];
    statistics.stages.push_back(StageStatistics{
        stage_name(static_cast<Stage>(stage)),
        static_cast<double>(counters.nanoseconds.load()) * 1e-9, counters.bytes.load(),
        counters.messages.load(), counters.io_requests.load()});
  }
}

}  // namespace flowio::runtime
