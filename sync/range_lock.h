// RangeLock: byte-range locks, shared or exclusive, over the processes of a
// communicator, without file-system locks. Requests that do not conflict
// (disjoint ranges, or shared with shared) hold their leases at the same
// time; conflicting ones are served in arrival order (range_table.h).
//
// The table of requests lives in a window on the home process; a mutex of
// any algorithm (MutexLock: hybrid, one-sided or MCS) guards its updates,
// which are one-sided:
//   acquire  take the table mutex, read the table, write this request with
//            the next ticket, release the mutex; if an earlier request
//            conflicts, wait for the wake-up message of the last of them
//            to leave (the progress thread receives it);
//   release  take the table mutex, read the table, clear this request,
//            release the mutex, and wake every waiter that nothing earlier
//            blocks any more.
// Uncontended, an acquire costs the mutex's operations plus one read and
// one write of the table; releasing costs the caller nothing (it runs on
// the progress thread). Each process has kSlotsPerProcess slots: more
// requests than that wait in a local queue, in order.
#pragma once

#include <mpi.h>

#include <memory>

#include "sync/lock.h"
#include "sync/progress_port.h"

namespace flowio::sync {

class RangeLock final : public Lock {
 public:
  static constexpr int kSlotsPerProcess = 8;

  // Collective over `comm`; the table lives on `home`, guarded by
  // `table_mutex` (a MutexLock, collective over `comm` as well).
  RangeLock(MPI_Comm comm, ProgressPort& progress, int home, std::unique_ptr<Lock> table_mutex);
  ~RangeLock() override;

  // An empty range is granted at once and conflicts with nothing.
  Future<Lease> acquire(ByteRange range, LockMode mode) override;
  void close() override;
  std::string name() const override;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace flowio::sync
