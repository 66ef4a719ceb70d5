// LockWindow: the 64-bit words a lock algorithm shares between processes,
// read and updated with one-sided operations: atomic fetch-and-op, swap,
// replace, get. Two ways to carry them out, chosen when the window is made:
//
//   shared memory  when every process of the channel runs on one node
//                  (Channel::shares_memory): the words live in an MPI-3 shared
//                  window (MPI_Win_allocate_shared) and each operation is
//                  the processor's atomic instruction on them (the unified
//                  memory model); it is done when the call returns, and the
//                  target process takes no part.
//   MPI one-sided  otherwise: MPI_Rget_accumulate and MPI_Rget in one
//                  passive-target epoch to every process (MPI_Win_lock_all,
//                  MPI_MODE_NOCHECK). Request-based, so that the progress
//                  thread completes them: MPI_Fetch_and_op and
//                  MPI_Compare_and_swap have no request form and would need
//                  MPI_Win_flush, which blocks the calling thread inside
//                  MPI. MPI_Rget_accumulate completes only once applied at
//                  the target (its old value came back), which request-based
//                  puts do not promise; updates go through it even when the
//                  old value is not needed. MPICH (4.0, ch4) applies such
//                  operations at the target only inside an MPI call there:
//                  the process that owns words others update keeps its
//                  progress thread polling (home_poll.h).
// Either way each operation returns an MPI request (MPI_REQUEST_NULL when
// already done) that the caller completes through its Channel.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "sync/channel.h"

namespace flowio::sync {

// Thread safety: the operations may be issued from any thread; each
// buffer passed in must stay untouched until its request completes.
class LockWindow {
 public:
  // Collective over the channel's communicator: `words` 64-bit words here
  // (0 is allowed), zeroed. Throws MpiError.
  LockWindow(const Channel& channel, int words);
  // Frees nothing collective: call close() first (otherwise the window and
  // its memory are left to MPI_Finalize).
  ~LockWindow() = default;
  LockWindow(const LockWindow&) = delete;
  LockWindow& operator=(const LockWindow&) = delete;

  // Collective: frees the window. Every operation targeting it, from any
  // process, must have completed.
  void close();

  // Whether operations go through MPI (no shared memory): the process
  // whose words others update must then keep MPI progressing.
  bool remote() const { return !shared_; }

  // A 64-bit load or store of this process's word `index` that cannot be
  // torn (others update the words concurrently).
  std::uint64_t load(int index) const;
  void store(int index, std::uint64_t value) const;
  // Makes updates that MPI applied to this process's words visible to this
  // thread's loads (MPI_Win_sync).
  void sync() const;

  // *result = word `word` of `target`, then that word = word op *operand
  // (op: MPI_BOR, MPI_BAND, MPI_REPLACE): atomic.
  MPI_Request fetch_and_op(const std::uint64_t* operand, std::uint64_t* result, int target,
                           int word, MPI_Op op) const;
  // `count` words from `words` into `target` at `word`, each atomically;
  // the old words go to `old`. Complete when applied at the target.
  MPI_Request replace(const std::uint64_t* words, std::uint64_t* old, int count, int target,
                      int word) const;
  // `count` words of `target` from `word` into `into`, each atomically.
  MPI_Request get(std::uint64_t* into, int count, int target, int word) const;

 private:
  MPI_Win window_ = MPI_WIN_NULL;
  bool shared_ = false;
  std::uint64_t* local_ = nullptr;  // MPI one-sided: from MPI_Alloc_mem
  // Shared memory: every process's words (null where it has none).
  std::vector<std::uint64_t*> words_of_;
};

}  // namespace flowio::sync
