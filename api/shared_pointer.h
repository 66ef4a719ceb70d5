// SharedPointer: the shared file pointer of an open File (File::*_shared,
// File::*_ordered, and through them MPI_File_*_shared and
// MPI_File_*_ordered), one MPI_Offset in etypes held by rank 0 and updated
// with one-sided atomics, so independent calls need no help from the other
// processes' threads.
//
// The pointers live in slots of MPI windows kept for each group of
// processes the program opens files on: creating and freeing a window
// costs more than the rest of an open and a close together (27 us against
// 18 us for ROMIO's whole open + close on 2 ranks here), and programs open
// and close files on the same processes again and again, often through a
// new duplicate of their communicator each time (HDF5 does). A kept window
// is found again for any communicator with the same processes in the same
// order (MPI_Comm_compare, a local call), and kept until MPI_Finalize, which
// frees them all collectively (a delete callback of an attribute of
// MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize on every
// process, in the order of the windows' agreed ids).
//
// Which window and slot a file takes is agreed, not assumed: threads may
// open files at once on different communicators of one group, in a
// different order on each process, so each process's choice may differ.
// Before the open, each process holds the lowest free slot it has for the
// group (HeldPointerSlot: no other file of the process takes it
// meanwhile); File::open's check of its mode compares the processes'
// choices (MPI_Allreduce, which it makes anyway); the file takes the slot when all
// chose the same, a slot of a new kept window when none had one, and a
// window of its own otherwise.
//
// Thread safety: the calls of one process on one file are serialized by
// the caller (a File is used from one thread at a time); files may be
// opened and closed from several threads at once.
#pragma once

#include <mpi.h>

namespace flowio {

struct PointerWindow;

// A slot of a kept window that this process would give a file about to be
// opened, held until the open takes it or lets it go (destruction).
class HeldPointerSlot {
 public:
  // The lowest free slot of the kept windows of `comm`'s group, or none.
  explicit HeldPointerSlot(MPI_Comm comm);
  ~HeldPointerSlot();
  HeldPointerSlot(HeldPointerSlot&& other) noexcept;
  HeldPointerSlot(const HeldPointerSlot&) = delete;
  HeldPointerSlot& operator=(const HeldPointerSlot&) = delete;
  HeldPointerSlot& operator=(HeldPointerSlot&&) = delete;

  // The window's id (the same on every process of its group) and the slot,
  // or -1 and -1: what the processes compare.
  MPI_Offset window_id() const;
  MPI_Offset slot() const { return slot_; }

 private:
  friend class SharedPointer;
  PointerWindow* window_ = nullptr;
  int slot_ = -1;
};

class SharedPointer {
 public:
  // Collective over `file_comm`, the file's own communicator, which
  // carries the collective steps of set() and claim_in_rank_order() and
  // must outlive this object. `held` is this process's choice of slot;
  // `same_everywhere`, whether every process held the same window and
  // slot (or every process none).
  SharedPointer(MPI_Comm file_comm, HeldPointerSlot held, bool same_everywhere);
  // Gives the slot back. Call it once every process has stopped using the
  // pointer (after the close's agreement): rank 0 resets the slot to 0
  // for the next file, and a late update would leak into it.
  ~SharedPointer();
  SharedPointer(const SharedPointer&) = delete;
  SharedPointer& operator=(const SharedPointer&) = delete;

  // Atomically adds `etypes` and returns the value before the addition.
  MPI_Offset fetch_add(MPI_Offset etypes);
  MPI_Offset get();
  // Collective: every process passes the same value. Barriers order every
  // process's earlier updates before it and its later ones after it.
  void set(MPI_Offset position);
  // False when this process knows the pointer is 0: no call of this
  // process moved it since it was last set to 0 by a collective call. A
  // caller that learns from every process that none moved it may skip
  // resetting it (File::set_view asks along with its own agreement).
  bool moved() const { return moved_; }
  // Collective: the pointer advances by the sum of every process's
  // `etypes`, in rank order; returns where this process's share starts.
  MPI_Offset claim_in_rank_order(MPI_Offset etypes);
  // Makes the destructor local (for files the program never closed: their
  // own windows are left to MPI_Finalize, and the slot they hold in a kept
  // window stays taken).
  void abandon() { window_ = nullptr; }

 private:
  MPI_Comm file_comm_;
  int rank_ = 0;
  PointerWindow* window_ = nullptr;
  int slot_ = 0;
  bool moved_ = false;
};

}  // namespace flowio
