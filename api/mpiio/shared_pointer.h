// SharedPointer: the shared file pointer of an open file (MPI_File_*_shared,
// MPI_File_*_ordered), one MPI_Offset in etypes held by rank 0 and updated
// with one-sided atomics, so independent calls need no help from the other
// processes' threads.
//
// The pointers live in slots of an MPI window kept for each group of
// processes the program opens files on: creating and freeing a window
// costs more than the rest of an open and a close together (27 us against
// 18 us for ROMIO's whole open + close on 2 ranks here), and programs open
// and close files on the same processes again and again, often through a
// new duplicate of their communicator each time (HDF5 does). A window is
// made on a duplicate of the first communicator of its group, found again
// for any communicator with the same processes in the same order
// (MPI_Comm_compare, a local call), and kept until MPI_Finalize. A file
// takes the lowest free slot at open and gives it back, reset to 0, at
// close. Opens and closes are collective and made in the same order
// everywhere, so every process picks the same window and slot. When all
// slots of a window are taken, a file gets a window of its own.
//
// Thread safety: the calls of one process on one file are serialized by
// the caller (MPI file handles are used from one thread at a time); opens
// and closes are collective over the file's processes, and those of files
// whose groups overlap are made in the same order everywhere.
#pragma once

#include <mpi.h>

namespace flowio::mpiio {

struct PointerWindow;

class SharedPointer {
 public:
  // Collective over `comm`, the communicator the program opened the file
  // on (its group's window is found or made); `file_comm`, the file's own
  // duplicate, carries the collective steps of set() and
  // claim_in_rank_order(), and must outlive this object.
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
  // Rank 0 sets the pointer without synchronizing. For callers that run it
  // between two collective steps over the file's communicator, which order
  // every process's earlier updates before it and its later ones after it
  // (MPI_File_set_view's agreements), so set()'s barriers are not needed.
  // Every process calls it.
  void set_between_collectives(MPI_Offset position);
  // False when this process knows the pointer is 0: no call of this
  // process moved it since it was last set to 0 by a collective call. A
  // caller that learns from every process that none moved it may skip
  // resetting it (MPI_File_set_view asks along with its argument check).
  bool moved() const { return moved_; }
  // Collective: the pointer advances by the sum of every process's
  // `etypes`, in rank order; returns where this process's share starts.
  MPI_Offset claim_in_rank_order(MPI_Offset etypes);
  // Makes the destructor local (for files the program never closed: their
  // own windows are left to MPI_Finalize, the kept ones are released by
  // release_pointer_windows()).
  void abandon() { window_ = nullptr; }

 private:
  MPI_Comm file_comm_;
  int rank_ = 0;
  PointerWindow* window_ = nullptr;
  int slot_ = 0;
  bool moved_ = false;
};

// Frees every kept window, collectively, in the order they were made (the
// same on every process). The layer's MPI_Finalize calls it before
// finalizing MPI, once the SharedPointers of files still open have been
// abandoned.
void release_pointer_windows();

}  // namespace flowio::mpiio
