// AtomicMode: what MPI-IO's atomic mode (MPI_File_set_atomicity) needs from
// a lock, for one open file. Every access takes a lease over the bytes it
// covers, from the first to the last (the whole file with
// flowio_lock_ranges=disable): exclusive to write, shared to read (the
// mutexes make every lease exclusive). While it is held no other access
// that conflicts runs, so each access is indivisible with respect to the
// others; and one process's write is on the file, visible to every other
// process's read, when its lease is released.
//
// Collective operations stay collective. Their data phase waits for one
// lease over the hull of every process's access, taken by one process (the
// leader, rank 0) on behalf of all and announced to the others
// (lock_collective); the aggregators then read or write their windows, and
// the leader lets go after the operation's outcome is agreed, when every
// window is done. One lease for the whole operation, not one per window:
// a process's collective access is spread over several aggregators'
// windows, and only a lease held across all of them makes it indivisible
// for a concurrent independent access; taken by one process, it needs no
// ordering between the aggregators' own requests, which could otherwise
// deadlock behind a waiting request that spans two of them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "flowio/future.h"
#include "runtime/core/access.h"
#include "sync/lock.h"
#include "sync/lock_settings.h"
#include "sync/progress_port.h"

namespace flowio::sync {

// Thread safety: lock_access from any thread; lock_collective from the
// threads that run collective operations, in operation order; close from
// one.
class AtomicMode {
 public:
  // Collective over `comm`: builds the lock (make_lock; `settings` is
  // updated to what was built) and a communicator of its own for the
  // announcements. Throws UsageError for bad settings, MpiError, IoError.
  AtomicMode(MPI_Comm comm, const std::string& path, LockSettings& settings,
             ProgressPort& progress);
  ~AtomicMode();
  AtomicMode(const AtomicMode&) = delete;
  AtomicMode& operator=(const AtomicMode&) = delete;

  const LockSettings& settings() const { return settings_; }

  // The lease an independent access needs: over [access.file_begin(),
  // access.file_end()), exclusive when `writing`. An empty access needs
  // none (a ready, empty Lease).
  Future<Lease> lock_access(const core::Access& access, bool writing);

  // Collective, in the same order on every process, one call per
  // collective operation that runs two-phase I/O: the lease over `hull`
  // (every process's access), acquired by the leader. The Future is ready
  // on the leader when it holds the lease, and on the others when the
  // leader has announced it; their Lease is empty. The leader must keep
  // its Lease until every process's part of the operation has touched the
  // file for the last time.
  Future<Lease> lock_collective(ByteRange hull, bool writing);

  // Collective. This process must hold and await no lease.
  void close();

 private:
  struct State;
  LockSettings settings_;
  std::shared_ptr<State> state_;
};

}  // namespace flowio::sync
