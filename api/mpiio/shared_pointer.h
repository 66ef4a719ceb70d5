// SharedPointer: the shared file pointer of an open file (MPI_File_*_shared,
// MPI_File_*_ordered), one MPI_Offset in etypes held by rank 0 of the file's
// communicator and updated with one-sided atomics, so independent calls
// need no help from the other processes' threads.
//
// Thread safety: the calls of one process are serialized by the caller
// (MPI file handles are used from one thread at a time).
#pragma once

#include <mpi.h>

namespace flowio::mpiio {

class SharedPointer {
 public:
  // Collective over `comm`, which must outlive this object.
  explicit SharedPointer(MPI_Comm comm);
  // Collective: every process destroys its SharedPointer together.
  ~SharedPointer();
  SharedPointer(const SharedPointer&) = delete;
  SharedPointer& operator=(const SharedPointer&) = delete;

  // Atomically adds `etypes` and returns the value before the addition.
  MPI_Offset fetch_add(MPI_Offset etypes);
  MPI_Offset get();
  // Collective: every process passes the same value.
  void set(MPI_Offset position);
  // Collective: the pointer advances by the sum of every process's
  // `etypes`, in rank order; returns where this process's share starts.
  MPI_Offset claim_in_rank_order(MPI_Offset etypes);
  // Makes the destructor local: the window is left to MPI_Finalize (for
  // files the program never closed, where a collective free could hang).
  void abandon() { window_ = MPI_WIN_NULL; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  MPI_Win window_ = MPI_WIN_NULL;
  MPI_Offset* value_ = nullptr;  // rank 0's storage
};

}  // namespace flowio::mpiio
