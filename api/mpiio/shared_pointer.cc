#include "api/mpiio/shared_pointer.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "flowio/error.h"

namespace flowio::mpiio {

// One window of pointer slots, all held by rank 0 of its communicator.
struct PointerWindow {
  // A duplicate of the first communicator of the group (kept windows), or
  // MPI_COMM_NULL (a file's own window, made on the file's communicator).
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  std::vector<bool> taken;
};

namespace {

// Slots per kept window: more files than this open at once on one group
// get windows of their own.
constexpr int kSlots = 64;

// The kept windows, in the order they were made.
struct Registry {
  std::mutex mutex;
  std::vector<PointerWindow*> kept;
};

Registry& registry() {
  static auto* instance = new Registry();  // used until MPI_Finalize
  return *instance;
}

// Collective over `comm`: a window of `slots` pointers, all 0, in one
// passive-target epoch for its whole life (each access ends with a flush).
std::unique_ptr<PointerWindow> make_window(MPI_Comm comm, int slots) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const MPI_Aint bytes = rank == 0 ? static_cast<MPI_Aint>(slots * sizeof(MPI_Offset)) : 0;
  MPI_Offset* values = nullptr;
  auto window = std::make_unique<PointerWindow>();
  check_mpi(MPI_Win_allocate(bytes, sizeof(MPI_Offset), MPI_INFO_NULL, comm, &values, &window->win),
            "MPI_Win_allocate for the shared file pointers");
  if (rank == 0) std::fill(values, values + slots, MPI_Offset{0});
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window->win), "MPI_Win_lock_all");
  // Nobody reads a pointer before rank 0 has zeroed it.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  window->taken.assign(static_cast<std::size_t>(slots), false);
  return window;
}

// Collective over the window's group.
void free_window(PointerWindow* window) {
  MPI_Win_unlock_all(window->win);
  MPI_Win_free(&window->win);
  if (window->comm != MPI_COMM_NULL) MPI_Comm_free(&window->comm);
  delete window;
}

// The kept window of `comm`'s group, made (collectively) if there is none.
PointerWindow* kept_window_of(MPI_Comm comm) {
  Registry& all = registry();
  {
    std::lock_guard lock(all.mutex);
    for (PointerWindow* window : all.kept) {
      int same = MPI_UNEQUAL;
      MPI_Comm_compare(comm, window->comm, &same);
      if (same == MPI_IDENT || same == MPI_CONGRUENT) return window;
    }
  }
  MPI_Comm own = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &own), "MPI_Comm_dup");
  std::unique_ptr<PointerWindow> window = make_window(own, kSlots);
  window->comm = own;
  std::lock_guard lock(all.mutex);
  all.kept.push_back(window.get());
  return window.release();
}

}  // namespace

SharedPointer::SharedPointer(MPI_Comm comm, MPI_Comm file_comm) : file_comm_(file_comm) {
  MPI_Comm_rank(file_comm_, &rank_);
  PointerWindow* kept = kept_window_of(comm);
  const auto free_slot = std::find(kept->taken.begin(), kept->taken.end(), false);
  if (free_slot == kept->taken.end()) {
    window_ = make_window(file_comm_, 1).release();
    window_->taken[0] = true;
    return;
  }
  *free_slot = true;
  window_ = kept;
  slot_ = static_cast<int>(free_slot - kept->taken.begin());
}

SharedPointer::~SharedPointer() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || window_ == nullptr) return;
  if (window_->comm == MPI_COMM_NULL) {
    free_window(window_);
    return;
  }
  if (rank_ == 0) {
    const MPI_Offset zero = 0;
    MPI_Offset ignored = 0;
    MPI_Fetch_and_op(&zero, &ignored, MPI_OFFSET, 0, slot_, MPI_REPLACE, window_->win);
    MPI_Win_flush(0, window_->win);
  }
  window_->taken[static_cast<std::size_t>(slot_)] = false;
}

MPI_Offset SharedPointer::fetch_add(MPI_Offset etypes) {
  moved_ = moved_ || etypes != 0;
  MPI_Offset before = 0;
  check_mpi(MPI_Fetch_and_op(&etypes, &before, MPI_OFFSET, 0, slot_, MPI_SUM, window_->win),
            "MPI_Fetch_and_op on the shared file pointer");
  check_mpi(MPI_Win_flush(0, window_->win), "MPI_Win_flush");
  return before;
}

MPI_Offset SharedPointer::get() {
  MPI_Offset now = 0;
  check_mpi(MPI_Fetch_and_op(nullptr, &now, MPI_OFFSET, 0, slot_, MPI_NO_OP, window_->win),
            "MPI_Fetch_and_op on the shared file pointer");
  check_mpi(MPI_Win_flush(0, window_->win), "MPI_Win_flush");
  return now;
}

// The barriers keep every process's earlier independent updates before the
// new value, and every later one after it.
void SharedPointer::set(MPI_Offset position) {
  check_mpi(MPI_Barrier(file_comm_), "MPI_Barrier");
  set_between_collectives(position);
  check_mpi(MPI_Barrier(file_comm_), "MPI_Barrier");
}

void SharedPointer::set_between_collectives(MPI_Offset position) {
  moved_ = position != 0;
  if (rank_ != 0) return;
  MPI_Offset ignored = 0;
  check_mpi(MPI_Fetch_and_op(&position, &ignored, MPI_OFFSET, 0, slot_, MPI_REPLACE, window_->win),
            "MPI_Fetch_and_op on the shared file pointer");
  check_mpi(MPI_Win_flush(0, window_->win), "MPI_Win_flush");
}

MPI_Offset SharedPointer::claim_in_rank_order(MPI_Offset etypes) {
  MPI_Offset before_me = 0;
  check_mpi(MPI_Exscan(&etypes, &before_me, 1, MPI_OFFSET, MPI_SUM, file_comm_), "MPI_Exscan");
  if (rank_ == 0) before_me = 0;  // MPI_Exscan leaves rank 0's result undefined
  MPI_Offset total = 0;
  check_mpi(MPI_Allreduce(&etypes, &total, 1, MPI_OFFSET, MPI_SUM, file_comm_), "MPI_Allreduce");
  MPI_Offset base = 0;
  if (rank_ == 0) base = fetch_add(total);
  check_mpi(MPI_Bcast(&base, 1, MPI_OFFSET, 0, file_comm_), "MPI_Bcast");
  return base + before_me;
}

void release_pointer_windows() {
  std::vector<PointerWindow*> kept;
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    kept.swap(all.kept);
  }
  for (PointerWindow* window : kept) free_window(window);
}

}  // namespace flowio::mpiio
