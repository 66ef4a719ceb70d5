#include "api/mpiio/shared_pointer.h"

#include "flowio/error.h"

namespace flowio::mpiio {

SharedPointer::SharedPointer(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  const MPI_Aint bytes = rank_ == 0 ? static_cast<MPI_Aint>(sizeof(MPI_Offset)) : 0;
  check_mpi(MPI_Win_allocate(bytes, sizeof(MPI_Offset), MPI_INFO_NULL, comm_, &value_, &window_),
            "MPI_Win_allocate for the shared file pointer");
  if (rank_ == 0) *value_ = 0;
  // One passive-target epoch for the file's lifetime; each access is
  // completed with a flush.
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

SharedPointer::~SharedPointer() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || window_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(window_);
  MPI_Win_free(&window_);
}

MPI_Offset SharedPointer::fetch_add(MPI_Offset etypes) {
  MPI_Offset before = 0;
  check_mpi(MPI_Fetch_and_op(&etypes, &before, MPI_OFFSET, 0, 0, MPI_SUM, window_),
            "MPI_Fetch_and_op on the shared file pointer");
  check_mpi(MPI_Win_flush(0, window_), "MPI_Win_flush");
  return before;
}

MPI_Offset SharedPointer::get() {
  MPI_Offset now = 0;
  check_mpi(MPI_Fetch_and_op(nullptr, &now, MPI_OFFSET, 0, 0, MPI_NO_OP, window_),
            "MPI_Fetch_and_op on the shared file pointer");
  check_mpi(MPI_Win_flush(0, window_), "MPI_Win_flush");
  return now;
}

// The barriers keep every process's earlier independent updates before the
// new value, and every later one after it.
void SharedPointer::set(MPI_Offset position) {
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
  if (rank_ == 0) {
    MPI_Offset ignored = 0;
    check_mpi(MPI_Fetch_and_op(&position, &ignored, MPI_OFFSET, 0, 0, MPI_REPLACE, window_),
              "MPI_Fetch_and_op on the shared file pointer");
    check_mpi(MPI_Win_flush(0, window_), "MPI_Win_flush");
  }
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

MPI_Offset SharedPointer::claim_in_rank_order(MPI_Offset etypes) {
  MPI_Offset before_me = 0;
  check_mpi(MPI_Exscan(&etypes, &before_me, 1, MPI_OFFSET, MPI_SUM, comm_), "MPI_Exscan");
  if (rank_ == 0) before_me = 0;  // MPI_Exscan leaves rank 0's result undefined
  MPI_Offset total = 0;
  check_mpi(MPI_Allreduce(&etypes, &total, 1, MPI_OFFSET, MPI_SUM, comm_), "MPI_Allreduce");
  MPI_Offset base = 0;
  if (rank_ == 0) base = fetch_add(total);
  check_mpi(MPI_Bcast(&base, 1, MPI_OFFSET, 0, comm_), "MPI_Bcast");
  return base + before_me;
}

}  // namespace flowio::mpiio
