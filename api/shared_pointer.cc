#include "api/shared_pointer.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "flowio/error.h"

namespace flowio {

// One window of pointer slots, all held by rank 0 of its communicator.
struct PointerWindow {
  // A duplicate of the file communicator it was made on (kept windows), or
  // MPI_COMM_NULL (a file's own window, made on the file's communicator).
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  // Kept windows: agreed by the processes of its group when it was made.
  MPI_Offset id = -1;
  std::vector<bool> taken;  // kept windows: under the registry's mutex
};

namespace {

// Slots per kept window.
constexpr int kSlots = 64;

// The kept windows, and the ids this process has given or is agreeing on.
struct Registry {
  std::mutex mutex;
  std::vector<PointerWindow*> kept;
  std::set<MPI_Offset> ids;
  MPI_Offset next_id = 0;
  bool freed_at_finalize = false;  // the attribute below is set
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

// Collective over `comm`: an id that no process of `comm` has given to
// another kept window, nor is agreeing on for one (another thread may be
// making one at once on another communicator). Tried until every process
// finds the largest proposal free; a clash needs windows made at once.
MPI_Offset agree_on_new_id(MPI_Comm comm) {
  Registry& all = registry();
  for (;;) {
    MPI_Offset proposal = 0;
    {
      std::lock_guard lock(all.mutex);
      proposal = all.next_id;
    }
    MPI_Offset id = 0;
    check_mpi(MPI_Allreduce(&proposal, &id, 1, MPI_OFFSET, MPI_MAX, comm), "MPI_Allreduce");
    int free_here = 0;
    {
      std::lock_guard lock(all.mutex);
      free_here = all.ids.insert(id).second ? 1 : 0;
      all.next_id = std::max(all.next_id, id + 1);
    }
    int free_everywhere = 0;
    check_mpi(MPI_Allreduce(&free_here, &free_everywhere, 1, MPI_INT, MPI_LAND, comm),
              "MPI_Allreduce");
    if (free_everywhere) return id;
    if (free_here) {
      std::lock_guard lock(all.mutex);
      all.ids.erase(id);
    }
  }
}

// Frees every kept window, collectively, in the order of their ids (agreed
// when they were made, so that no two windows whose groups share a process
// have the same id: every process frees in one global order). Files still
// open then have abandoned their pointers, or will find MPI finalized.
void free_kept_windows() {
  std::vector<PointerWindow*> kept;
  {
    Registry& all = registry();
    std::lock_guard lock(all.mutex);
    kept.swap(all.kept);
    all.ids.clear();
  }
  std::sort(kept.begin(), kept.end(),
            [](const PointerWindow* a, const PointerWindow* b) { return a->id < b->id; });
  for (PointerWindow* window : kept) free_window(window);
}

// MPI runs the delete callbacks of MPI_COMM_SELF's attributes first thing
// in MPI_Finalize, on every process, while MPI still works: windows, being
// collective, must be freed before MPI stops.
int free_kept_windows_at_finalize(MPI_Comm, int, void*, void*) {
  free_kept_windows();
  return MPI_SUCCESS;
}

// Collective over `file_comm`: a new kept window for its group, with
// slot 0 taken.
PointerWindow* make_kept_window(MPI_Comm file_comm) {
  MPI_Comm own = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(file_comm, &own), "MPI_Comm_dup");
  std::unique_ptr<PointerWindow> window = make_window(own, kSlots);
  window->comm = own;
  window->id = agree_on_new_id(own);
  window->taken[0] = true;
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
  if (!all.freed_at_finalize) {
    int keyval = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_kept_windows_at_finalize, &keyval,
                                     nullptr),
              "MPI_Comm_create_keyval");
    check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr), "MPI_Comm_set_attr");
    all.freed_at_finalize = true;
  }
  all.kept.push_back(window.get());
  return window.release();
}

}  // namespace

HeldPointerSlot::HeldPointerSlot(MPI_Comm comm) {
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
  // The window with the smallest id first, as every process that has the
  // same windows free would choose.
  for (PointerWindow* window : all.kept) {
    if (window_ != nullptr && window->id > window_->id) continue;
    int same = MPI_UNEQUAL;
    MPI_Comm_compare(comm, window->comm, &same);
    if (same != MPI_IDENT && same != MPI_CONGRUENT) continue;
    const auto free_slot = std::find(window->taken.begin(), window->taken.end(), false);
    if (free_slot == window->taken.end()) continue;
    window_ = window;
    slot_ = static_cast<int>(free_slot - window->taken.begin());
  }
  if (window_ != nullptr) window_->taken[static_cast<std::size_t>(slot_)] = true;
}

HeldPointerSlot::HeldPointerSlot(HeldPointerSlot&& other) noexcept
    : window_(std::exchange(other.window_, nullptr)), slot_(std::exchange(other.slot_, -1)) {}

HeldPointerSlot::~HeldPointerSlot() {
  if (window_ == nullptr) return;
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
  window_->taken[static_cast<std::size_t>(slot_)] = false;
}

MPI_Offset HeldPointerSlot::window_id() const { return window_ == nullptr ? -1 : window_->id; }

SharedPointer::SharedPointer(MPI_Comm file_comm, HeldPointerSlot held, bool same_everywhere)
    : file_comm_(file_comm) {
  MPI_Comm_rank(file_comm_, &rank_);
  if (same_everywhere && held.window_ != nullptr) {
    window_ = std::exchange(held.window_, nullptr);
    slot_ = held.slot_;
    return;
  }
  if (same_everywhere) {
    window_ = make_kept_window(file_comm_);
    slot_ = 0;
    return;
  }
  window_ = make_window(file_comm_, 1).release();
  window_->taken[0] = true;
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
  Registry& all = registry();
  std::lock_guard lock(all.mutex);
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
  moved_ = position != 0;
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

}  // namespace flowio
