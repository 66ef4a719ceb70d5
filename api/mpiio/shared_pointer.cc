#include "api/mpiio/shared_pointer.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "flowio/error.h"

namespace flowio::mpiio {

// One window of pointer slots, all held by rank 0 of its communicator.
struct PointerWindow {
  // The program's communicator it is kept on (an attribute of it), or
  // MPI_COMM_NULL for a file's own window and after that communicator was
  // freed while files still used the window.
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  std::vector<bool> taken;
  bool own = false;         // one file's window, freed with it
  bool orphaned = false;    // kept, but its communicator is gone
  bool finalizing = false;  // being released by release_pointer_windows
};

namespace {

// Slots per kept window: more files than this open at once on one
// communicator get windows of their own.
constexpr int kSlots = 64;

// The windows alive, in the order they were made. The mutex guards the
// list only: it is never held across an MPI call, since freeing a
// communicator calls back into this file.
struct Registry {
  std::mutex mutex;
  std::vector<PointerWindow*> windows;
  int keyval = MPI_KEYVAL_INVALID;
};

Registry& registry() {
  static auto* instance = new Registry();  // used until MPI_Finalize
  return *instance;
}

// Collective over `comm`: a window of `slots` pointers, all 0, in one
// passive-target epoch for its whole life (each access ends with a flush).
PointerWindow* make_window(MPI_Comm comm, int slots) {
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
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
  all.windows.push_back(window.get());
  return window.release();
}

// Collective over the window's group.
void free_window(PointerWindow* window) {
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    std::erase(all.windows, window);
  }
  MPI_Win_unlock_all(window->win);
  MPI_Win_free(&window->win);
  delete window;
}

// The program frees a communicator it opened files on (MPI_Comm_free is
// collective, so every process is here): the window goes with it, or,
// while files still use it, with the last of them.
int on_communicator_freed(MPI_Comm, int, void* attribute, void*) {
  auto* window = static_cast<PointerWindow*>(attribute);
  if (window->finalizing) return MPI_SUCCESS;
  window->comm = MPI_COMM_NULL;
  if (std::find(window->taken.begin(), window->taken.end(), true) == window->taken.end()) {
    free_window(window);
  } else {
    window->orphaned = true;
  }
  return MPI_SUCCESS;
}

int keyval() {
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
  if (all.keyval == MPI_KEYVAL_INVALID) {
    check_mpi(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_communicator_freed, &all.keyval, nullptr),
        "MPI_Comm_create_keyval");
  }
  return all.keyval;
}

}  // namespace

SharedPointer::SharedPointer(MPI_Comm comm, MPI_Comm file_comm) : file_comm_(file_comm) {
  MPI_Comm_rank(file_comm_, &rank_);
  const int key = keyval();
  void* attribute = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm, key, &attribute, &found), "MPI_Comm_get_attr");
  PointerWindow* kept = found ? static_cast<PointerWindow*>(attribute) : nullptr;
  if (kept == nullptr) {
    kept = make_window(comm, kSlots);
    kept->comm = comm;
    check_mpi(MPI_Comm_set_attr(comm, key, kept), "MPI_Comm_set_attr");
  }
  const auto free_slot = std::find(kept->taken.begin(), kept->taken.end(), false);
  if (free_slot == kept->taken.end()) {
    window_ = make_window(file_comm_, 1);
    window_->own = true;
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
  if (window_->own) {
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
  if (window_->orphaned &&
      std::find(window_->taken.begin(), window_->taken.end(), true) == window_->taken.end()) {
    free_window(window_);
  }
}

MPI_Offset SharedPointer::fetch_add(MPI_Offset etypes) {
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
  if (rank_ == 0) {
    MPI_Offset ignored = 0;
    check_mpi(
        MPI_Fetch_and_op(&position, &ignored, MPI_OFFSET, 0, slot_, MPI_REPLACE, window_->win),
        "MPI_Fetch_and_op on the shared file pointer");
    check_mpi(MPI_Win_flush(0, window_->win), "MPI_Win_flush");
  }
  check_mpi(MPI_Barrier(file_comm_), "MPI_Barrier");
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
  std::vector<PointerWindow*> windows;
  int key = MPI_KEYVAL_INVALID;
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    windows = all.windows;
    key = all.keyval;
  }
  for (PointerWindow* window : windows) {
    window->finalizing = true;
    if (window->comm != MPI_COMM_NULL) MPI_Comm_delete_attr(window->comm, key);
    free_window(window);
  }
}

}  // namespace flowio::mpiio
