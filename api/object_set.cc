#include "flowio/object_set.h"

#include <string>
#include <utility>

#include "flowio/error.h"
#include "runtime/access_gather.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "runtime/engine/collective_error.h"
#include "sync/object_set.h"

namespace flowio {

struct ObjectSet::Impl {
  sync::ObjectSet objects;
  std::size_t shared = 0;

  FileObject object(sync::ObjectSet::ObjectId id) const {
    const sync::Interval& interval = objects.object(id);
    const auto ranks = objects.ranks(id);
    return FileObject{interval.begin, interval.end, std::vector<int>(ranks.begin(), ranks.end())};
  }
};

ObjectSet ObjectSet::gather(MPI_Comm comm, MPI_Offset displacement, MPI_Datatype etype,
                            MPI_Datatype filetype, MPI_Offset begin, MPI_Offset end) {
  std::shared_ptr<const core::FileView> view;
  runtime::run_collectively(comm, "ObjectSet::gather", [&] {
    if (begin < 0 || end < begin) {
      throw UsageError(ErrorCode::invalid_argument, "ObjectSet::gather: bad file range [" +
                                                        std::to_string(begin) + ", " +
                                                        std::to_string(end) + ")");
    }
    view = std::make_shared<const core::FileView>(displacement, etype, filetype);
  });
  // Every process must describe the same range, or the sets would differ.
  MPI_Offset bounds[4] = {begin, -begin, end, -end};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, bounds, 4, MPI_OFFSET, MPI_MAX, comm), "MPI_Allreduce");
  if (bounds[0] != -bounds[1] || bounds[2] != -bounds[3]) {
    throw UsageError(ErrorCode::invalid_argument,
                     "ObjectSet::gather: the processes gave different file ranges");
  }
  const core::Access mine(view, view->stream_bytes_before(begin), view->stream_bytes_before(end));
  const std::vector<core::Access> all = runtime::allgather_accesses(comm, mine);
  auto impl = std::make_shared<Impl>();
  impl->objects = sync::ObjectSet(all, begin, end);
  for (sync::ObjectSet::ObjectId id = 0; id < impl->objects.object_count(); ++id) {
    if (impl->objects.shared(id)) ++impl->shared;
  }
  return ObjectSet(std::move(impl));
}

ObjectSet ObjectSet::gather(MPI_Comm comm, MPI_Offset displacement, MPI_Datatype etype,
                            MPI_Datatype filetype, std::int64_t piece_budget) {
  std::shared_ptr<const core::FileView> view;
  runtime::run_collectively(comm, "ObjectSet::gather", [&] {
    view = std::make_shared<const core::FileView>(displacement, etype, filetype);
  });
  // One byte of the stream carries the view (a view with no data travels
  // as an empty access, and covers nothing).
  const core::Access mine(view, 0, view->filetype().size() > 0 ? 1 : 0);
  std::vector<std::shared_ptr<const core::FileView>> views;
  for (const core::Access& access : runtime::allgather_accesses(comm, mine)) {
    views.push_back(access.view());
  }
  auto impl = std::make_shared<Impl>();
  impl->objects = sync::ObjectSet::of_views(views, piece_budget);
  for (sync::ObjectSet::ObjectId id = 0; id < impl->objects.object_count(); ++id) {
    if (impl->objects.shared(id)) ++impl->shared;
  }
  return ObjectSet(std::move(impl));
}

ObjectSet::ObjectSet() : impl_(std::make_shared<const Impl>()) {}
ObjectSet::ObjectSet(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
ObjectSet::~ObjectSet() = default;
ObjectSet::ObjectSet(ObjectSet&&) noexcept = default;
ObjectSet& ObjectSet::operator=(ObjectSet&&) noexcept = default;
ObjectSet::ObjectSet(const ObjectSet&) = default;
ObjectSet& ObjectSet::operator=(const ObjectSet&) = default;

MPI_Offset ObjectSet::begin() const { return impl_->objects.range_begin(); }
MPI_Offset ObjectSet::end() const { return impl_->objects.range_end(); }
MPI_Offset ObjectSet::period() const { return impl_->objects.period(); }
std::size_t ObjectSet::size() const { return impl_->objects.object_count(); }
std::size_t ObjectSet::shared_count() const { return impl_->shared; }

FileObject ObjectSet::object(std::size_t index) const {
  if (index >= size()) {
    throw UsageError(ErrorCode::invalid_argument, "ObjectSet::object: index " +
                                                      std::to_string(index) + " of " +
                                                      std::to_string(size()) + " objects");
  }
  return impl_->object(static_cast<sync::ObjectSet::ObjectId>(index));
}

std::vector<FileObject> ObjectSet::overlapping(MPI_Offset begin, MPI_Offset end) const {
  std::vector<FileObject> out;
  impl_->objects.for_each_overlapping(begin, end, [&](sync::ObjectSet::ObjectId id) {
    out.push_back(impl_->object(id));
    return true;
  });
  return out;
}

std::vector<FileObject> ObjectSet::shared_with_others(int rank) const {
  std::vector<FileObject> out;
  for (const sync::ObjectSet::ObjectId id : impl_->objects.shared_objects_of(rank)) {
    out.push_back(impl_->object(id));
  }
  return out;
}

bool ObjectSet::touches_shared(MPI_Offset begin, MPI_Offset end) const {
  return impl_->objects.touches_shared(begin, end);
}

std::size_t ObjectSet::memory_bytes() const { return impl_->objects.memory_bytes(); }

}  // namespace flowio
