#include "sync/lock_window.h"

#include <algorithm>

#include "flowio/error.h"

namespace flowio::sync {
namespace {

// Atomic instructions on shared words: sequentially consistent, so that
// the algorithms' reasoning (which only orders one word's operations, and
// a mutex's release after the table writes it guards) holds across
// processes as it does across threads.
std::uint64_t apply(std::uint64_t* word, std::uint64_t operand, MPI_Op op) {
  if (op == MPI_BOR) return __atomic_fetch_or(word, operand, __ATOMIC_SEQ_CST);
  if (op == MPI_BAND) return __atomic_fetch_and(word, operand, __ATOMIC_SEQ_CST);
  return __atomic_exchange_n(word, operand, __ATOMIC_SEQ_CST);
}

}  // namespace

LockWindow::LockWindow(const Channel& channel, int words) {
  const MPI_Comm comm = channel.comm();
  const MPI_Aint bytes =
      static_cast<MPI_Aint>(words) * static_cast<MPI_Aint>(sizeof(std::uint64_t));
  shared_ = channel.shares_memory();
  if (shared_) {
    // Each process's words on pages of their own (noncontiguous): nothing
    // depends on them being adjacent.
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    std::uint64_t* mine = nullptr;
    const int allocated =
        MPI_Win_allocate_shared(bytes, sizeof(std::uint64_t), info, comm, &mine, &window_);
    MPI_Info_free(&info);
    check_mpi(allocated, "MPI_Win_allocate_shared for a lock");
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    words_of_.resize(static_cast<std::size_t>(ranks), nullptr);
    for (int rank = 0; rank < ranks; ++rank) {
      MPI_Aint size = 0;
      int unit = 0;
      std::uint64_t* base = nullptr;
      MPI_Win_shared_query(window_, rank, &size, &unit, &base);
      words_of_[static_cast<std::size_t>(rank)] = size > 0 ? base : nullptr;
    }
    local_ = mine;
  } else {
    // MPI_Win_create over memory of MPI_Alloc_mem, not MPI_Win_allocate:
    // MPICH 4.0.2 (Debian's, ch4:ucx) gives MPI_Win_allocate windows of
    // some sizes (8 and 72 bytes per process, found while testing the
    // one-sided lock) whose remote operations land in another process's
    // memory: a put to rank 1 changes rank 0's word. At least one word
    // each, so that every process has an address to give.
    check_mpi(
        MPI_Alloc_mem(std::max<MPI_Aint>(bytes, sizeof(std::uint64_t)), MPI_INFO_NULL, &local_),
        "MPI_Alloc_mem for a lock");
    const int created =
        MPI_Win_create(local_, bytes, sizeof(std::uint64_t), MPI_INFO_NULL, comm, &window_);
    if (created != MPI_SUCCESS) {
      MPI_Free_mem(local_);
      check_mpi(created, "MPI_Win_create for a lock");
    }
  }
  for (int i = 0; i < words; ++i) local_[i] = 0;
  // Nobody may target the words before they are zeroed.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier for a lock");
  if (!shared_) {
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all for a lock");
  }
}

void LockWindow::close() {
  if (window_ == MPI_WIN_NULL) return;
  if (!shared_) check_mpi(MPI_Win_unlock_all(window_), "MPI_Win_unlock_all for a lock");
  check_mpi(MPI_Win_free(&window_), "MPI_Win_free for a lock");
  if (!shared_) MPI_Free_mem(local_);
  local_ = nullptr;
  words_of_.clear();
}

void LockWindow::sync() const {
  if (!shared_) MPI_Win_sync(window_);
}

// MPI (or another process) stores into the words while this thread reads
// them. Sequentially consistent like the shared-memory operations above;
// with MPI one-sided operations the ordering that matters comes from the
// MPI calls that completed the updates and from MPI_Win_sync.
std::uint64_t LockWindow::load(int index) const {
  return __atomic_load_n(&local_[index], __ATOMIC_SEQ_CST);
}

void LockWindow::store(int index, std::uint64_t value) const {
  __atomic_store_n(&local_[index], value, __ATOMIC_SEQ_CST);
}

MPI_Request LockWindow::fetch_and_op(const std::uint64_t* operand, std::uint64_t* result,
                                     int target, int word, MPI_Op op) const {
  if (shared_) {
    *result = apply(words_of_[static_cast<std::size_t>(target)] + word, *operand, op);
    return MPI_REQUEST_NULL;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Rget_accumulate(operand, 1, MPI_UINT64_T, result, 1, MPI_UINT64_T, target, word, 1,
                                MPI_UINT64_T, op, window_, &request),
            "MPI_Rget_accumulate");
  return request;
}

MPI_Request LockWindow::replace(const std::uint64_t* words, std::uint64_t* old, int count,
                                int target, int word) const {
  if (shared_) {
    std::uint64_t* into = words_of_[static_cast<std::size_t>(target)] + word;
    for (int i = 0; i < count; ++i)
      old[i] = __atomic_exchange_n(&into[i], words[i], __ATOMIC_SEQ_CST);
    return MPI_REQUEST_NULL;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Rget_accumulate(words, count, MPI_UINT64_T, old, count, MPI_UINT64_T, target, word,
                                count, MPI_UINT64_T, MPI_REPLACE, window_, &request),
            "MPI_Rget_accumulate");
  return request;
}

MPI_Request LockWindow::get(std::uint64_t* into, int count, int target, int word) const {
  if (shared_) {
    const std::uint64_t* from = words_of_[static_cast<std::size_t>(target)] + word;
    for (int i = 0; i < count; ++i) into[i] = __atomic_load_n(&from[i], __ATOMIC_SEQ_CST);
    return MPI_REQUEST_NULL;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Rget(into, count, MPI_UINT64_T, target, word, count, MPI_UINT64_T, window_, &request),
      "MPI_Rget");
  return request;
}

}  // namespace flowio::sync
