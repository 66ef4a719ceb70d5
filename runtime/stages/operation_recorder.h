// OperationRecorder: what one collective operation did on this process,
// stage by stage (time, bytes, messages, file requests), the I/O methods
// its windows used, and the trace spans (runtime/trace.h) when a trace is
// recorded. Stage names are those of File::statistics() and the trace.
//
// A completed operation leaves an OperationRecord (plain numbers, cheap to
// keep: small calls are the common case); OperationStatistics, with its
// names and strings, is built only when the program asks.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "flowio/statistics.h"
#include "runtime/core/realm_policy.h"
#include "runtime/stages/trace.h"

namespace flowio::runtime {

enum class Stage {
  offsets,
  realms,
  metadata,
  pack,
  compress,
  exchange,
  decompress,
  io,
  unpack,
  agree,
  count
};
const char* stage_name(Stage stage);

// The I/O methods an operation can use, as bits of OperationRecord::methods.
enum class Method : unsigned { contiguous, sieve, mapped, vectored, direct, count };
const char* method_name(Method method);

struct StageSums {
  std::int64_t nanoseconds = 0;
  std::int64_t bytes = 0;
  std::int64_t messages = 0;
  std::int64_t io_requests = 0;
};

// One completed operation, as File::statistics() reports it.
//
// A file keeps the last 1024 of these, in memory that each new record
// touches for the first time (or first since 1024 operations ago), so a
// record is small: the header, the stages that did something (a small
// call uses two or three) in place, any others and the compression
// statistics (when there were any) apart.
struct OperationRecord {
  struct StageEntry {
    Stage stage = Stage::offsets;
    StageSums sums;
  };
  static constexpr std::size_t kStagesInPlace = 3;

  std::uint64_t sequence = 0;
  std::int64_t bytes = 0;
  std::int64_t nanoseconds = 0;
  std::int64_t iterations = 0;
  int aggregators = 0;
  unsigned methods = 0;  // bit i: Method i was used
  core::RealmPolicy realm_policy = core::RealmPolicy::even;
  bool writing = false;
  bool aggregator = false;
  bool alltoallw = false;
  bool read_access = true;
  bool plan_reused = false;
  // Stages with a nonzero sum, in stage order: the first kStagesInPlace
  // in `stages`, the rest in `more_stages`.
  std::size_t stage_count = 0;
  std::array<StageEntry, kStagesInPlace> stages{};
  std::unique_ptr<StageEntry[]> more_stages;
  std::unique_ptr<CompressionStatistics> compression;  // none: all zero, no mode

  void add_stage(Stage stage, const StageSums& sums);
  OperationStatistics statistics() const;
};

// One span of `stage` in the process's trace (runtime/trace.h), when a
// trace is recorded: of operation `sequence`, for window (or round or
// item) `index` (-1: the whole operation), `role` appended to the label,
// `args` the members of its "args" object (Trace::record).
void trace_span(Stage stage, int rank, bool writing, std::uint64_t sequence, std::int64_t begin_ns,
                std::int64_t end_ns, std::int64_t index = -1, const char* role = "",
                const TraceArgs& args = {});

// Thread safety: record() and add_method() may be called from any thread,
// unless the recorder is made for `one_thread`.
class OperationRecorder {
 public:
  // `one_thread`: every stage of the operation runs on one thread (an
  // operation run inline), so the sums are added without locked
  // instructions, a small call's costliest ones after its copy.
  OperationRecorder(int rank, bool writing, std::uint64_t sequence, bool one_thread)
      : rank_(rank), writing_(writing), one_thread_(one_thread), sequence_(sequence) {}

  // One span of `stage` from `begin_ns` to now, for window (or round or
  // item) `index` (-1: the whole operation), with what it moved; `role`
  // is appended to the trace label.
  void record(Stage stage, std::int64_t begin_ns, std::int64_t index = -1, const char* role = "",
              std::int64_t bytes = 0, std::int64_t messages = 0, std::int64_t requests = 0);
  // The same for a span that ended at `end_ns` (a clock read costs 50 ns
  // or more here, a small call's stages are few hundred).
  void record_until(Stage stage, std::int64_t begin_ns, std::int64_t end_ns,
                    std::int64_t index = -1, const char* role = "", std::int64_t bytes = 0,
                    std::int64_t messages = 0, std::int64_t requests = 0);
  // A compress or decompress span: `bytes` of data went out (came in) as
  // `wire_bytes` of frames. The trace shows both and labels the span
  // "lzo" when the frames are smaller (some went compressed), else "raw".
  void record_compression(Stage stage, std::int64_t begin_ns, std::int64_t index,
                          std::int64_t bytes, std::int64_t wire_bytes);
  // The end of the span recorded last (0 before any).
  std::int64_t last_end_ns() const { return last_end_ns_.load(std::memory_order_relaxed); }
  void add_method(Method method);

  // The sums and methods, into `record`. Call once the stages are done.
  void fill(OperationRecord& record) const;

 private:
  // Plain numbers, added to through std::atomic_ref unless one thread
  // records (fill() reads them after the operation completed, which orders
  // every add before it): zeroing ten stages' atomics one by one cost a
  // small call more than its recording.
  struct Counters {
    std::int64_t nanoseconds;
    std::int64_t bytes;
    std::int64_t messages;
    std::int64_t io_requests;
  };
  void add(std::int64_t& counter, std::int64_t value) const {
    if (one_thread_) {
      counter += value;
    } else {
      std::atomic_ref<std::int64_t>(counter).fetch_add(value, std::memory_order_relaxed);
    }
  }
  // bits |= bit, as add().
  void set_bit(unsigned& bits, unsigned bit) const {
    if (one_thread_) {
      bits |= bit;
    } else {
      std::atomic_ref<unsigned>(bits).fetch_or(bit, std::memory_order_relaxed);
    }
  }

  int rank_;
  bool writing_;
  bool one_thread_;
  std::uint64_t sequence_;
  // The counters of `stage`, marked as touched, so that fill() reads only
  // the stages that recorded something (a small call: one or two of ten).
  Counters& touch(Stage stage);

  Counters stages_[static_cast<int>(Stage::count)]{};
  unsigned touched_ = 0;  // bit i: stages_[i] was recorded to (set_bit)
  unsigned methods_ = 0;  // set_bit
  std::atomic<std::int64_t> last_end_ns_{0};
};

}  // namespace flowio::runtime
