// SharedPointer: the shared file pointer of an open file (MPI_File_*_shared,
// MPI_File_*_ordered), one MPI_Offset in etypes held by rank 0 and updated
// with one-sided atomics, so independent calls need no help from the other
// processes' threads.
//
// The pointers live in slots of an MPI window that is made once per
// communicator the program opens files on (an attribute of that
// communicator) and kept until the communicator is freed or MPI_Finalize:
// creating and freeing a window costs more than the rest of an open and a
// close together (27 us against 18 us for ROMIO's whole open + close on 2
// ranks here), and programs open and close files on the same communicator
// again and again. A file takes the lowest free slot at open and gives it
// back, reset to 0, at close. Opens and closes are collective and made in
// the same order everywhere, so every process picks the same slot. When
// all slots of a communicator's window are taken, a file gets a window of
// its own.
//
// Thread safety: the calls of one process on one file are serialized by
// the caller (MPI file handles are used from one thread at a time); opens
// and closes on one communicator are too (they are collective over it).
#pragma once

#include <mpi.h>

namespace flowio::mpiio {

struct PointerWindow;

class SharedPointer {
 public:
  // Collective over `comm`, the communicator the program opened the file
  // on (its window is kept there); `file_comm`, the file's own duplicate,
  // carries the collective steps of set() and claim_in_rank_order(), and
  // must outlive this object.
  SharedPointer(MPI_Comm comm, MPI_Comm file_comm);
  // Gives the slot back. Call it once every process has stopped using the
  // pointer (after the close's agreement): rank 0 resets the slot to 0
  // for the next file, and a late update would leak into it.
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
  // Makes the destructor local (for files the program never closed, whose
  // windows MPI_Finalize releases: release_pointer_windows()).
  void abandon() { window_ = nullptr; }

 private:
  MPI_Comm file_comm_;
  int rank_ = 0;
  PointerWindow* window_ = nullptr;
  int slot_ = 0;
};

// Frees every kept window, collectively, in the order they were made (the
// same on every process). The layer's MPI_Finalize calls it before
// finalizing MPI; windows of files still open are freed too (their
// SharedPointers must have been abandoned).
void release_pointer_windows();

}  // namespace flowio::mpiio
