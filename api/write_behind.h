// WriteBehind: the blocking collective writes of one file that return
// before they end (hint flowio_write_behind, hints.h), and what they still
// owe the program until they end. A write returns as soon as its data is
// copied; a durable one (hint flowio_durable) makes no copy and returns
// once this process's data phase is over, its sync and agreement still to
// come (api/file_write_behind.cc). Both are kept here alike.
//
// A write behind runs as a nonblocking collective write (of its copy, or
// of the caller's memory until its data phase is over), so the engine
// orders it against every later collective call on the file as it orders
// nonblocking ones (runtime/engine/operation_order.h: a later read or
// write of bytes it may touch starts its data phase after it ends). What
// the engine does not order, the file does through this class: an
// independent access by this process waits for the writes behind whose
// bytes it meets (wait_overlapping), calls that must see every byte
// written wait for all of them (drain), and a write that failed reports
// its error later (take_failure(): File::Impl reports it where every
// process knows of it, so every process throws alike).
//
// The writes are held to a budget of data bytes: a write waits for the
// oldest writes behind until its bytes fit (make_room), so the copies in
// memory, and the durable writes waiting for their sync, stay within the
// budget whatever the program does; one larger than the budget does not
// go behind.
//
// Used by the file's caller thread only (the file's calls are not made
// from several threads at once, as MPI requires of one file handle).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>

#include "flowio/future.h"
#include "flowio/hints.h"

namespace flowio {

// The budget the hints give (flowio_write_behind, bytes; 0: off), or else
// the environment's FLOWIO_WRITE_BEHIND (which turns write-behind on for
// every file that does not say otherwise, as the test suite's switch).
// Throws UsageError(invalid_hint) for a value that is not a byte count.
std::int64_t write_behind_budget(const Hints& hints);

// Collective over `comm`: throws UsageError(not_same), on every process,
// unless write-behind is `on` on every process or on none (its writes
// check their arguments on every process at the call). `operation` names
// the call.
void require_same_write_behind(MPI_Comm comm, bool on, const char* operation);

class WriteBehind {
 public:
  // A write handed to the engine: when it ends, its copy (none for a
  // durable write, which ran on the caller's memory), the bytes of the
  // file this process's part may touch, and how an error names it.
  struct Write {
    Future<std::size_t> done;
    std::unique_ptr<std::byte[]> copy;
    bool without_copy = false;  // its data phase ran on the caller's memory
    std::int64_t bytes = 0;     // its data, counted against the budget
    std::int64_t file_begin = 0;
    std::int64_t file_end = 0;
    std::string call;  // e.g. "write_at_all at offset 4096 (etypes)"
  };

  // What the writes behind did, for the MPI-IO layer's report
  // (FLOWIO_MPIIO_REPORT=1).
  struct Counts {
    std::int64_t writes_behind = 0;   // writes that returned before they ended
    std::int64_t without_copy = 0;    // of them, durable ones that made no copy
    std::int64_t waits_for_room = 0;  // writes that first waited for older ones
  };
  // Over every file of the process so far. Thread safe.
  static Counts process_counts();

  std::int64_t budget() const { return budget_; }
  // A new budget (0: off), once every write behind has ended (drain()).
  void set_budget(std::int64_t bytes) { budget_ = bytes; }
  bool on() const { return budget_ > 0; }
  bool idle() const { return writes_.empty(); }
  // A write that has ended failed, and its failure is kept for
  // take_failure() (takes out the writes that ended first).
  bool knows_failure() {
    reap();
    return failure_ != nullptr;
  }

  // Waits for the oldest writes until a write of `bytes` fits the budget;
  // false when it never can (more than the budget, or write-behind off):
  // then nothing was waited for, and the write does not go behind.
  bool make_room(std::int64_t bytes);
  // A write that now goes behind (after make_room()).
  void add(Write write);
  // Waits for the writes whose bytes meet [begin, end).
  void wait_overlapping(std::int64_t begin, std::int64_t end);
  // Waits for every write.
  void drain();
  // The first failure of an ended write, named by its call, or null; kept
  // until taken once, so that it is reported at one call only.
  std::exception_ptr take_failure();

 private:
  // Waits for writes_[index] and takes it out, keeping its failure.
  void finish(std::size_t index);
  // Takes out the writes that have ended.
  void reap();

  std::int64_t budget_ = 0;
  std::deque<Write> writes_;    // oldest first
  std::int64_t in_flight_ = 0;  // their data bytes
  std::exception_ptr failure_;
};

}  // namespace flowio
