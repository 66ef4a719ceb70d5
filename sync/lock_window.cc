#include "sync/lock_window.h"

#include <algorithm>

#include "flowio/error.h"

namespace flowio::sync {

// MPI_Win_create over memory of MPI_Alloc_mem, not MPI_Win_allocate:
// MPICH 4.0.2 (Debian's, ch4:ucx) gives MPI_Win_allocate windows of some
// sizes (8 and 72 bytes per process, found while testing the one-sided lock)
// whose remote operations land in another process's memory: a put to
// rank 1 changes rank 0's word.
LockWindow::LockWindow(MPI_Comm comm, int words) {
  const MPI_Aint bytes =
      static_cast<MPI_Aint>(words) * static_cast<MPI_Aint>(sizeof(std::uint64_t));
  // At least one word, so that every process has an address to give.
  check_mpi(MPI_Alloc_mem(std::max<MPI_Aint>(bytes, sizeof(std::uint64_t)), MPI_INFO_NULL, &local_),
            "MPI_Alloc_mem for a lock");
  for (int i = 0; i < std::max(words, 1); ++i) local_[i] = 0;
  const int created =
      MPI_Win_create(local_, bytes, sizeof(std::uint64_t), MPI_INFO_NULL, comm, &window_);
  if (created != MPI_SUCCESS) {
    MPI_Free_mem(local_);
    check_mpi(created, "MPI_Win_create for a lock");
  }
  // Nobody may target the words before they are zeroed.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier for a lock");
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all for a lock");
}

void LockWindow::close() {
  if (window_ == MPI_WIN_NULL) return;
  check_mpi(MPI_Win_unlock_all(window_), "MPI_Win_unlock_all for a lock");
  check_mpi(MPI_Win_free(&window_), "MPI_Win_free for a lock");
  MPI_Free_mem(local_);
  local_ = nullptr;
}

void LockWindow::sync() const { MPI_Win_sync(window_); }

// MPI stores into the window from inside MPI calls, possibly on another
// thread of this process; relaxed atomic accesses keep each 64-bit word
// whole, and the ordering that matters comes from MPI_Win_sync and from
// the MPI calls that completed the updates.
std::uint64_t LockWindow::load(int index) const {
  return __atomic_load_n(&local_[index], __ATOMIC_RELAXED);
}

void LockWindow::store(int index, std::uint64_t value) const {
  __atomic_store_n(&local_[index], value, __ATOMIC_RELAXED);
}

MPI_Request LockWindow::fetch_and_op(const std::uint64_t* operand, std::uint64_t* result,
                                     int target, int word, MPI_Op op) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Rget_accumulate(operand, 1, MPI_UINT64_T, result, 1, MPI_UINT64_T, target, word, 1,
                                MPI_UINT64_T, op, window_, &request),
            "MPI_Rget_accumulate");
  return request;
}

MPI_Request LockWindow::replace(const std::uint64_t* words, std::uint64_t* old, int count,
                                int target, int word) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Rget_accumulate(words, count, MPI_UINT64_T, old, count, MPI_UINT64_T, target, word,
                                count, MPI_UINT64_T, MPI_REPLACE, window_, &request),
            "MPI_Rget_accumulate");
  return request;
}

MPI_Request LockWindow::get(std::uint64_t* into, int count, int target, int word) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Rget(into, count, MPI_UINT64_T, target, word, count, MPI_UINT64_T, window_, &request),
      "MPI_Rget");
  return request;
}

}  // namespace flowio::sync
