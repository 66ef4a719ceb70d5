// Atomic mode: File::set_atomicity builds or frees the lock, and tells it
// which objects each process's view holds.
#include <cstdint>
#include <memory>
#include <vector>

#include "api/file_impl.h"
#include "runtime/access_gather.h"
#include "runtime/engine/collective_error.h"
#include "sync/lock_settings.h"
#include "sync/object_set.h"

namespace flowio {
namespace {

// Atomic mode's object set covers the views' common period when it holds
// at most this many pieces (about 14 MiB of objects, built in about 15 ms),
// else as much of the file as that many pieces cover; accesses beyond it
// take the lock as if they touched shared objects.
constexpr std::int64_t kAtomicModeObjectPieces = std::int64_t{1} << 18;
}  // namespace

void File::Impl::set_atomicity(bool on) {
  const int mine[2] = {on ? 1 : 0, on ? -1 : 0};
  int extremes[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, extremes, 2, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (extremes[0] != -extremes[1]) {
    throw UsageError(ErrorCode::invalid_argument,
                     "set_atomicity: the processes passed different flags");
  }
  wait_idle();
  if (on == (atomic != nullptr)) return;
  if (!on) {
    // Off even if closing the lock fails (the failure is reported). The
    // port goes after the lock.
    std::unique_ptr<runtime::LockProgress> port = std::move(lock_port);
    std::shared_ptr<sync::AtomicMode> closing = std::move(atomic);
    runtime::run_collectively(comm, "set_atomicity", [&] { closing->close(); });
    return;
  }
  lock_port = std::make_unique<runtime::LockProgress>(engine->progress());
  std::shared_ptr<sync::AtomicMode> built;
  runtime::run_collectively(comm, "set_atomicity", [&] {
    sync::LockSettings settings = sync::LockSettings::from_hints(hints);
    built = std::make_shared<sync::AtomicMode>(comm, path, settings, *lock_port);
  });
  atomic = std::move(built);
  describe_views_to_atomic_mode();
}

void File::Impl::describe_views_to_atomic_mode() {
  // Every process takes the same branch: the access mode and the data
  // representation are the same everywhere (MPI requires it of set_view).
  // Views of another representation lie in the file by its extents, not
  // by the flattened types that would travel. Views of a read-only file
  // may overlap (their pieces out of order, which a set is not built
  // from), and its accesses are reads, whose shared leases never wait for
  // one another. Without a set every access keeps its lease.
  if (!representation->is_native() || has(mode, Mode::rdonly)) {
    atomic->set_objects(nullptr);
    return;
  }
  const bool data = view->filetype().size() > 0;
  const std::vector<core::Access> accesses =
      runtime::allgather_accesses(comm, core::Access(view, 0, data ? 1 : 0));
  std::vector<std::shared_ptr<const core::FileView>> views;
  views.reserve(accesses.size());
  for (const core::Access& access : accesses) views.push_back(access.view());
  atomic->set_objects(std::make_shared<const sync::ObjectSet>(
      sync::ObjectSet::of_views(views, kAtomicModeObjectPieces)));
}

void File::set_atomicity(bool atomic) {
  Impl& file = impl();
  file.set_atomicity(atomic);
  file.report_write_behind_failure();
}

bool File::atomicity() const { return impl().atomic != nullptr; }

}  // namespace flowio
