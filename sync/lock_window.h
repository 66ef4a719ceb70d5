// LockWindow: an MPI window of 64-bit words that a lock algorithm reads and
// updates with one-sided operations, in one passive-target epoch to every
// process that lasts as long as the window (MPI_Win_lock_all with
// MPI_MODE_NOCHECK: the algorithms never lock the window exclusively).
//
// Every operation is request-based (MPI_Rget, MPI_Rget_accumulate), so the
// progress thread can complete it: MPI_Fetch_and_op and
// MPI_Compare_and_swap have no request form and would need
// MPI_Win_flush, which blocks the calling thread inside MPI until the
// target answers. MPI_Rget_accumulate's request completes only when the
// operation was applied at the target (its old value came back), which
// plain request-based puts do not promise; that is why updates go through
// it even when the old value is not needed.
//
// MPICH (4.0, ch4) applies one-sided operations at the target only inside
// an MPI call made there: the process that owns words others update must
// keep its progress thread polling (sync/home_poll.h).
#pragma once

#include <mpi.h>

#include <cstdint>

namespace flowio::sync {

// Thread safety: the operations may be issued from any thread; each
// buffer passed in must stay untouched until its request completes.
class LockWindow {
 public:
  // Collective over `comm`: `words` 64-bit words here (0 is allowed),
  // zeroed. Throws MpiError.
  LockWindow(MPI_Comm comm, int words);
  // Frees nothing collective: call close() first (otherwise the window and
  // its memory are left to MPI_Finalize).
  ~LockWindow() = default;
  LockWindow(const LockWindow&) = delete;
  LockWindow& operator=(const LockWindow&) = delete;

  // Collective: ends the epoch and frees the window. Every operation
  // targeting it, from any process, must have completed.
  void close();

  // This process's words. Others update them inside MPI calls made on
  // this process (see above); read them with load() after sync().
  std::uint64_t* local() const { return local_; }
  // Makes updates that MPI applied to local() visible to this thread's
  // loads (MPI_Win_sync).
  void sync() const;
  // A 64-bit load of local word `index` that cannot be torn.
  std::uint64_t load(int index) const;
  void store(int index, std::uint64_t value) const;

  // *result = word `word` of `target`, then that word = word op *operand
  // (op: MPI_BOR, MPI_BAND, MPI_SUM, MPI_REPLACE, MPI_NO_OP): atomic.
  MPI_Request fetch_and_op(const std::uint64_t* operand, std::uint64_t* result, int target,
                           int word, MPI_Op op) const;
  // `count` words from `words` into `target` at `word`; the old words go
  // to `old` (count words). Complete when applied at the target.
  MPI_Request replace(const std::uint64_t* words, std::uint64_t* old, int count, int target,
                      int word) const;
  // `count` words of `target` from `word` into `into`.
  MPI_Request get(std::uint64_t* into, int count, int target, int word) const;

 private:
  MPI_Win window_ = MPI_WIN_NULL;
  std::uint64_t* local_ = nullptr;
};

}  // namespace flowio::sync
