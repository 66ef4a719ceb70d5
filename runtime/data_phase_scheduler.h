// DataPhaseScheduler: starts the data phases of a file's collective
// operations in call order, each as soon as every earlier operation it
// could interfere with has finished on every process.
//
// Two operations interfere when one writes and their file extents (the
// range from the first to the last byte any process accesses, which
// contains every sieving window) intersect, so that data sieving never
// races with another operation's writes; when both exchange by Alltoallw
// (collective calls must be posted in one order everywhere). Other
// operations' data phases run at once, side by side. (Operations that
// would share message tags are never live at once: tag_sequences.h.)
//
// The scheduler numbers operations by their own count (the `sequence`
// arguments below): only operations that reach it are numbered, in call
// order, so a blocking call settled at the call (its gather was the whole
// protocol and nothing else was outstanding) never touches it.
//
// Starting in call order on every process is what keeps operations in
// flight from deadlocking on the graph's bounded buffers: every process
// takes up items in the order (operation, file offset), so the earliest
// unfinished item anywhere always has its buffers (see collective_graph.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace flowio::runtime {

// What an operation's data phase may touch. An operation without a data
// phase (its data moved already) has an empty extent and interferes with
// nothing.
struct DataFootprint {
  bool writing = false;
  bool alltoallw = false;
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Thread safety: every method may be called from any thread.
class DataPhaseScheduler {
 public:
  // Operation `sequence` is ready for its data phase: `start` runs once it
  // may (on this thread, or on the thread that calls finished() for the
  // operation it waited for). Each sequence number is ready exactly once.
  void ready(std::uint64_t sequence, DataFootprint footprint, std::function<void()> start);
  // Operation `sequence` has finished on every process (its outcome is
  // agreed).
  void finished(std::uint64_t sequence);
  // Operation `sequence` has no data phase and is finished on every process
  // (its gather was the whole protocol): instead of ready() and
  // finished(); later operations never wait for it.
  void skip(std::uint64_t sequence);

 private:
  struct Waiting {
    DataFootprint footprint;
    std::function<void()> start;  // empty: skipped, nothing to start
  };
  void start_what_may();
  bool interferes(const DataFootprint& footprint) const;

  std::mutex mutex_;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, Waiting> waiting_;
  std::vector<std::pair<std::uint64_t, DataFootprint>> running_;  // few at once
  bool starting_ = false;                                         // a thread is running starts
};

}  // namespace flowio::runtime
