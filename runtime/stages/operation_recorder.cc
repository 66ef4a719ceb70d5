#include "runtime/stages/operation_recorder.h"

#include <algorithm>
#include <bit>
#include <string>

#include "runtime/engine/clock.h"
#include "runtime/stages/trace.h"

namespace flowio::runtime {

const char* stage_name(Stage stage) {
  static const char* const kNames[] = {"offsets",  "realms",     "metadata", "pack",   "compress",
                                       "exchange", "decompress", "io",       "unpack", "agree"};
  return kNames[static_cast<int>(stage)];
}

const char* method_name(Method method) {
  static const char* const kNames[] = {"contiguous", "sieve", "mapped", "vectored", "direct"};
  return kNames[static_cast<int>(method)];
}

void OperationRecorder::record(Stage stage, std::int64_t begin_ns, std::int64_t index,
                               const char* role, std::int64_t bytes, std::int64_t messages,
                               std::int64_t requests) {
  record_until(stage, begin_ns, now_ns(), index, role, bytes, messages, requests);
}

void OperationRecorder::record_until(Stage stage, std::int64_t begin_ns, std::int64_t end_ns,
                                     std::int64_t index, const char* role, std::int64_t bytes,
                                     std::int64_t messages, std::int64_t requests) {
  last_end_ns_.store(end_ns, std::memory_order_relaxed);
  // Relaxed: the sums are read only after the operation completes, which
  // orders them (every stage happens before the agreement that precedes
  // completion, through the graph's edges).
  // Zero counts are not added: each add is a locked instruction, and a
  // small call records several spans.
  Counters& counters = touch(stage);
  add(counters.nanoseconds, end_ns - begin_ns);
  if (bytes != 0) add(counters.bytes, bytes);
  if (messages != 0) add(counters.messages, messages);
  if (requests != 0) add(counters.io_requests, requests);
  if (Trace::process().enabled()) {
    TraceArgs args;
    for (const auto& [key, value] :
         {std::pair{"bytes", bytes}, {"messages", messages}, {"io_requests", requests}}) {
      if (value != 0) args.emplace_back(key, value);
    }
    trace_span(stage, rank_, writing_, sequence_, begin_ns, end_ns, index, role, args);
  }
}

void trace_span(Stage stage, int rank, bool writing, std::uint64_t sequence, std::int64_t begin_ns,
                std::int64_t end_ns, std::int64_t index, const char* role, const TraceArgs& args) {
  Trace& trace = Trace::process();
  if (trace.enabled()) {
    trace.record(stage_name(stage), rank,
                 std::string(writing ? "write#" : "read#") + std::to_string(sequence) +
                     (index >= 0 ? " w" + std::to_string(index) : "") + role,
                 begin_ns, end_ns, args);
  }
}

void OperationRecorder::record_compression(Stage stage, std::int64_t begin_ns, std::int64_t index,
                                           std::int64_t bytes, std::int64_t wire_bytes) {
  const std::int64_t end_ns = now_ns();
  last_end_ns_.store(end_ns, std::memory_order_relaxed);
  Counters& counters = touch(stage);
  add(counters.nanoseconds, end_ns - begin_ns);
  add(counters.bytes, bytes);
  if (Trace::process().enabled()) {
    trace_span(stage, rank_, writing_, sequence_, begin_ns, end_ns, index,
               wire_bytes < bytes ? " lzo" : " raw",
               {{"bytes", bytes}, {"wire_bytes", wire_bytes}});
  }
}

OperationRecorder::Counters& OperationRecorder::touch(Stage stage) {
  const unsigned bit = 1u << static_cast<unsigned>(stage);
  // Most spans are a stage's first: the locked or only when it is.
  if ((std::atomic_ref<unsigned>(touched_).load(std::memory_order_relaxed) & bit) == 0) {
    set_bit(touched_, bit);
  }
  return stages_[static_cast<int>(stage)];
}

void OperationRecorder::add_method(Method method) {
  // Relaxed: read after completion, as the sums.
  set_bit(methods_, 1u << static_cast<unsigned>(method));
}

void OperationRecorder::fill(OperationRecord& record) const {
  record.methods = methods_;
  // In stage order, the touched ones only.
  for (unsigned touched = touched_; touched != 0; touched &= touched - 1) {
    const auto stage = static_cast<std::size_t>(std::countr_zero(touched));
    const Counters& counters = stages_[stage];
    const StageSums sums{counters.nanoseconds, counters.bytes, counters.messages,
                         counters.io_requests};
    if (sums.nanoseconds != 0 || sums.bytes != 0 || sums.messages != 0 || sums.io_requests != 0) {
      record.add_stage(static_cast<Stage>(stage), sums);
    }
  }
}

void OperationRecord::add_stage(Stage stage, const StageSums& sums) {
  if (stage_count < kStagesInPlace) {
    stages[stage_count++] = {stage, sums};
    return;
  }
  if (!more_stages) {
    more_stages =
        std::make_unique<StageEntry[]>(static_cast<std::size_t>(Stage::count) - kStagesInPlace);
  }
  more_stages[stage_count++ - kStagesInPlace] = {stage, sums};
}

OperationStatistics OperationRecord::statistics() const {
  OperationStatistics out;
  out.sequence = sequence;
  out.writing = writing;
  out.bytes = bytes;
  out.seconds = static_cast<double>(nanoseconds) * 1e-9;
  out.aggregators = aggregators;
  out.aggregator = aggregator;
  out.iterations = iterations;
  out.realm_policy = core::realm_policy_name(realm_policy);
  out.exchange = alltoallw ? "alltoallw" : "point_to_point";
  out.read_access = read_access;
  out.plan_reused = plan_reused;
  if (compression) out.compression = *compression;
  for (unsigned m = 0; m < static_cast<unsigned>(Method::count); ++m) {
    if ((methods & (1u << m)) == 0) continue;
    out.method +=
        (out.method.empty() ? "" : "+") + std::string(method_name(static_cast<Method>(m)));
  }
  // Every stage is reported, those that did nothing with zeros.
  std::array<StageSums, static_cast<std::size_t>(Stage::count)> sums{};
  for (std::size_t i = 0; i < stage_count; ++i) {
    const StageEntry& entry = i < kStagesInPlace ? stages[i] : more_stages[i - kStagesInPlace];
    sums[static_cast<std::size_t>(entry.stage)] = entry.sums;
  }
  for (std::size_t stage = 0; stage < sums.size(); ++stage) {
    out.stages.push_back(StageStatistics{
        stage_name(static_cast<Stage>(stage)), static_cast<double>(sums[stage].nanoseconds) * 1e-9,
        sums[stage].bytes, sums[stage].messages, sums[stage].io_requests});
  }
  return out;
}

}  // namespace flowio::runtime
