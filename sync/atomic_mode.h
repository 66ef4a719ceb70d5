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
//
// With an object set (set_objects: the objects of every process's view),
// an access that touches only bytes no other process's view holds cannot
// conflict with anything and takes no lease; a collective operation in
// which no process's access touches a shared object takes none either
// (the processes learn it from the operation's summary gather, so they
// all decide alike).
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
#include "sync/object_set.h"
#include "sync/progress_port.h"

namespace flowio::sync {

// Thread safety: lock_access, needs_lock and may_rewrite_extent from any
// thread; lock_collective from the threads that run collective
// operations, in operation order; set_objects and close from one, with no
// access in flight.
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

  // The objects of every process's current view, or null (then every
  // nonempty access needs a lease). Ranks are those of the communicator
  // atomic mode was built over. Collective in effect: every process must
  // pass a set built from the same views, or the processes' collective
  // decisions differ.
  void set_objects(std::shared_ptr<const ObjectSet> objects);

  // Whether `access` needs a lease: it is nonempty and, as far as the
  // object set knows, touches a byte another process's view holds.
  bool needs_lock(const core::Access& access) const;

  // The lease an independent access needs: over [access.file_begin(),
  // access.file_end()), exclusive when `writing`. An access that needs
  // none (needs_lock) gets a ready, empty Lease at once.
  Future<Lease> lock_access(const core::Access& access, bool writing);

  // Whether a write of `access` may read-modify-write its extent (rewrite
  // the bytes between its pieces as they were read) without losing
  // another process's write. `leased`: this access holds the lease
  // lock_access gave it (a lease over the extent keeps out every access
  // of a shared object; only objects private to another process, which
  // their owner accesses without a lock, forbid it). Without a lease,
  // every byte of the extent outside the access must lie outside every
  // other process's view; without an object set, a lease is needed.
  // Bytes between the pieces that belong to this process's own view are
  // part of the access (a view never leaves its own bytes out of a
  // stream range), so the process's own other accesses never meet them.
  bool may_rewrite_extent(const core::Access& access, bool leased) const;

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
