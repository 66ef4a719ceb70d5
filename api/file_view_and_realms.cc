// File::set_view and the view's data representation, and the realms
// described by File::set_file_realms.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/file_impl.h"
#include "runtime/core/datatype_checks.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/engine/collective_error.h"

namespace flowio {
namespace {

// What set_view learns from every process in its one reduction: whether
// the etype size is the same everywhere, whether any process's new view
// has holes (its independent writes may then sieve: File::Impl::
// holes_in_some_view), and whether any process moved the shared file
// pointer since it was last 0 (else resetting it can be skipped: HDF5 sets
// views twice per collective call and never uses it), and whether the
// hints turn write-behind on or off alike everywhere (its writes check
// their arguments on every process: File::Impl::write_collective_behind).
struct ViewAgreement {
  bool same_etype_size = true;
  bool holes_somewhere = false;
  bool shared_pointer_moved = false;
  bool same_write_behind = true;
};

ViewAgreement agree_on_view(MPI_Comm comm, std::int64_t etype_size, bool holes,
                            bool shared_pointer_moved, bool write_behind) {
  const std::int64_t mine[6] = {etype_size,           -etype_size,
                                holes ? -1 : 0,       shared_pointer_moved ? -1 : 0,
                                write_behind ? 1 : 0, write_behind ? -1 : 0};
  std::int64_t least[6] = {0, 0, 0, 0, 0, 0};
  check_mpi(MPI_Allreduce(mine, least, 6, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  return ViewAgreement{least[0] == -least[1], least[2] < 0, least[3] < 0, least[4] == -least[5]};
}

}  // namespace

void File::set_view(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype,
                    const Hints& hints, const std::string& representation) {
  Impl& file = impl();
  file.wait_idle();
  std::shared_ptr<const core::FileView> view;
  std::shared_ptr<const exchange::DataRepresentation> chosen;
  std::int64_t write_behind = 0;
  runtime::run_collectively(file.comm, "set_view", [&] {
    core::require_committed(etype, "set_view: the etype");
    core::require_committed(filetype, "set_view: the filetype");
    chosen = exchange::find_representation(representation);
    core::ViewRules rules;
    if (!chosen->is_native()) rules.file_extent = &chosen->extent_function();
    rules.allow_overlap = has(file.mode, Mode::rdonly);
    view = std::make_shared<core::FileView>(displacement, etype, filetype, rules);
    Hints merged = file.hints;
    for (const auto& [key, value] : hints) merged[key] = value;
    check_hints(merged, file.ranks, file.file_realms.get());
    write_behind = write_behind_budget(merged);
  });
  // MPI requires the same etype extent everywhere (MPI 4.0, 14.3); only
  // valid views get this far, so every process takes part, and every one
  // learns the same answer.
  const ViewAgreement agreed = agree_on_view(
      file.comm, view->etype_size(), !view->is_contiguous() && !has(file.mode, Mode::rdonly),
      file.shared->moved(), write_behind > 0);
  require_same(agreed.same_etype_size, "set_view: the etype size");
  require_same(agreed.same_write_behind, "set_view: whether hint flowio_write_behind is on");
  // MPI resets both file pointers (MPI 4.1, 14.3).
  if (agreed.shared_pointer_moved) file.shared->set(0);
  if (agreed.holes_somewhere != file.holes_in_some_view) {
    file.holes_in_some_view = agreed.holes_somewhere;
    file.settings_for.fill(nullptr);
  }
  file.view = std::move(view);
  file.representation = std::move(chosen);
  file.pointer = 0;
  file.merge_hints(hints);
  file.forget_plans();
  if (file.atomic) file.describe_views_to_atomic_mode();
  file.report_write_behind_failure();
}

void File::Impl::set_file_realms(std::shared_ptr<const core::RealmDescription> realms) {
  wait_idle();
  std::uint64_t key = 0;
  runtime::run_collectively(comm, "set_file_realms", [&] {
    check_hints(hints, ranks, realms.get());
    if (realms) {
      key = runtime::CollectiveSettings::from_hints(hints, ranks, true, realms.get())
                .realms.tiling->key();
    }
  });
  // Every process must compute the same layout from the same realms: the
  // largest key and the largest complement of the key are the mine only
  // when every process has the same.
  const std::uint64_t mine[2] = {key, ~key};
  std::uint64_t largest[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, largest, 2, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
  require_same(largest[0] == ~largest[1], "set_file_realms: the realms");
  file_realms = std::move(realms);
  settings_for.fill(nullptr);
  forget_plans();
}

void File::set_file_realms(const FileRealm& first) {
  auto realms = std::make_shared<core::RealmDescription>();
  realms->one_for_all = true;
  runtime::run_collectively(impl().comm, "set_file_realms", [&] {
    core::require_committed(first.type, "set_file_realms: the realm type");
    realms->displacements.push_back(first.displacement);
    realms->types.push_back(core::flatten_cached(first.type));
  });
  impl().set_file_realms(std::move(realms));
}

void File::set_file_realms(const std::vector<FileRealm>& given) {
  auto realms = std::make_shared<core::RealmDescription>();
  runtime::run_collectively(impl().comm, "set_file_realms", [&] {
    for (const FileRealm& realm : given) {
      core::require_committed(realm.type, "set_file_realms: a realm type");
      realms->displacements.push_back(realm.displacement);
      realms->types.push_back(core::flatten_cached(realm.type));
    }
  });
  impl().set_file_realms(std::move(realms));
}

void File::clear_file_realms() { impl().set_file_realms(nullptr); }

MPI_Count File::type_extent(MPI_Datatype datatype) const {
  const Impl& file = impl();
  if (file.representation->is_native()) {
    MPI_Count lb = 0, extent = 0;
    check_mpi(MPI_Type_get_extent_x(datatype, &lb, &extent), "MPI_Type_get_extent_x");
    return extent;
  }
  return core::flatten_in_representation(datatype, file.representation->extent_function()).extent();
}

const std::string& File::representation() const { return impl().representation->name(); }

}  // namespace flowio
