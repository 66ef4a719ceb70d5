// ObjectFileWriter: the producer-side translator. A producer's write is cut
// into stretches of at most one window of its stream; for each, the
// consumers' object set over the stretch's file extent is built, each of
// the producer's pieces is looked up in its interval tree, and the routed
// runs are written while the next stretch is routed.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/consumer_views_access.h"
#include "api/section_writes.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "flowio/remap.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/core/memory_layout.h"
#include "runtime/core/piece_cursor.h"
#include "runtime/engine/collective_error.h"
#include "runtime/object_file_index.h"
#include "runtime/remap_route.h"

namespace flowio {
namespace {

// Stream bytes routed per step: bounds the object set built at once.
constexpr std::int64_t kStretchBytes = std::int64_t{16} << 20;

// The data stream of `count` copies of `type` at `buffer`, as one
// contiguous block: the buffer itself when the layout is contiguous, else
// a packed copy in `packed`.
const std::byte* contiguous_stream(const void* buffer, const core::FlatType& type, MPI_Count count,
                                   std::vector<std::byte>& packed) {
  const core::MemoryLayout layout{&type, count, reinterpret_cast<std::int64_t>(buffer)};
  if (layout.contiguous()) return reinterpret_cast<const std::byte*>(layout.address_of(0));
  packed.resize(static_cast<std::size_t>(layout.bytes()));
  core::PieceCursor cursor(type, count);
  core::Piece batch[256];
  std::size_t at = 0;
  while (const std::size_t n = cursor.next(batch, layout.bytes())) {
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(packed.data() + at, static_cast<const std::byte*>(buffer) + batch[i].offset,
                  static_cast<std::size_t>(batch[i].length));
      at += static_cast<std::size_t>(batch[i].length);
    }
  }
  return packed.data();
}

}  // namespace

struct ObjectFileWriter::Impl {
  File file;
  runtime::ObjectFileIndex index;
};

ObjectFileWriter ObjectFileWriter::create(MPI_Comm comm, const std::string& target,
                                          const ConsumerViews& consumers, MPI_Offset source_size,
                                          const Hints& hints) {
  if (source_size < 0) {
    throw UsageError(ErrorCode::invalid_argument, "ObjectFileWriter: negative source size");
  }
  ObjectFileWriter writer;
  writer.impl_ = std::make_unique<Impl>(
      Impl{File::open(comm, target, Mode::create | Mode::wronly, hints),
           runtime::ObjectFileIndex::plan(ConsumerViewsAccess::accesses(consumers), source_size)});
  Impl& impl = *writer.impl_;
  // Cut to nothing first: bytes no producer writes must read as zeros, not
  // as what an earlier file of that name held.
  impl.file.set_size(0);
  impl.file.set_size(impl.index.file_size());
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  runtime::run_collectively(comm, "ObjectFileWriter::create", [&] {
    if (rank != 0) return;
    const std::vector<std::byte> encoded = impl.index.encode();
    impl.file.write_at(0, encoded.data(), static_cast<MPI_Count>(encoded.size()), MPI_BYTE);
  });
  return writer;
}

ObjectFileWriter::ObjectFileWriter() = default;
ObjectFileWriter::~ObjectFileWriter() = default;
ObjectFileWriter::ObjectFileWriter(ObjectFileWriter&&) noexcept = default;
ObjectFileWriter& ObjectFileWriter::operator=(ObjectFileWriter&&) noexcept = default;

std::size_t ObjectFileWriter::write(MPI_Offset displacement, MPI_Datatype etype,
                                    MPI_Datatype filetype, MPI_Offset offset, const void* buffer,
                                    MPI_Count count, MPI_Datatype datatype) {
  if (!impl_) throw UsageError(ErrorCode::file_closed, "ObjectFileWriter::write: not open");
  if (offset < 0)
    throw UsageError(ErrorCode::invalid_argument, "ObjectFileWriter::write: negative offset");
  if (count < 0)
    throw UsageError(ErrorCode::invalid_count, "ObjectFileWriter::write: negative count");
  const auto view = std::make_shared<const core::FileView>(displacement, etype, filetype);
  const std::shared_ptr<const core::FlatType> memory_type = core::flatten_cached(datatype);
  const std::int64_t bytes = memory_type->size() * count;
  if (bytes == 0) return 0;
  if (view->filetype().size() == 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "ObjectFileWriter::write: data for a view that holds none");
  }
  std::vector<std::byte> packed;
  const std::byte* stream = contiguous_stream(buffer, *memory_type, count, packed);
  const std::int64_t stream_begin = offset * view->etype_size();
  const core::Access access(view, stream_begin, stream_begin + bytes);

  // Two stretches in flight: one routed while the other's runs are written.
  SectionWrites writes[2];
  std::vector<runtime::Copy> copies;
  std::size_t placed = 0;
  int turn = 0;
  for (std::int64_t first = 0; first < bytes; first += kStretchBytes, turn ^= 1) {
    const std::int64_t last = std::min(bytes, first + kStretchBytes);
    const runtime::WindowRoute route(impl_->index, access.offset_of(first),
                                     access.offset_of(last - 1) + 1);
    copies.clear();
    core::PieceCursor cursor = view->file_pieces(stream_begin + first);
    core::Piece batch[256];
    std::int64_t position = first;
    while (position < last) {
      const std::size_t n = cursor.next(batch, last - position);
      for (std::size_t i = 0; i < n; ++i) {
        route.route(batch[i], position, copies);
        position += batch[i].length;
      }
    }
    const std::vector<runtime::TargetRun> runs = runtime::plan_runs(copies);
    writes[turn].wait();
    placed += writes[turn].start(impl_->file, stream, copies, runs);
  }
  writes[0].wait();
  writes[1].wait();
  return placed;
}

void ObjectFileWriter::close() {
  if (!impl_) return;
  impl_->file.close();
  impl_.reset();
}

}  // namespace flowio
