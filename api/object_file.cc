#include "flowio/object_file.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "flowio/error.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/core/memory_layout.h"
#include "runtime/core/piece_cursor.h"
#include "runtime/engine/collective_error.h"
#include "runtime/object_file_index.h"

namespace flowio {

struct ObjectFile::Impl {
  File file;
  runtime::ObjectFileIndex index;
};

ObjectFile ObjectFile::open(MPI_Comm comm, const std::string& path, const Hints& hints) {
  File file = File::open(comm, path, Mode::rdonly, hints);
  std::optional<runtime::ObjectFileIndex> index;
  // Every process reads the index itself (a few kilobytes); the outcome is
  // agreed, so a file that is not an object file fails everywhere.
  runtime::run_collectively(file.communicator(), "ObjectFile::open", [&] {
    std::vector<std::byte> header(runtime::ObjectFileIndex::kHeaderBytes);
    header.resize(file.read_at(0, header.data(), static_cast<MPI_Count>(header.size()), MPI_BYTE));
    std::vector<std::byte> bytes(
        static_cast<std::size_t>(runtime::ObjectFileIndex::index_bytes_in(header, path)));
    bytes.resize(file.read_at(0, bytes.data(), static_cast<MPI_Count>(bytes.size()), MPI_BYTE));
    index.emplace(runtime::ObjectFileIndex::decode(bytes, path));
  });
  ObjectFile objects;
  objects.impl_ = std::make_unique<Impl>(Impl{std::move(file), std::move(*index)});
  return objects;
}

ObjectFile::ObjectFile() = default;
ObjectFile::~ObjectFile() = default;
ObjectFile::ObjectFile(ObjectFile&&) noexcept = default;
ObjectFile& ObjectFile::operator=(ObjectFile&&) noexcept = default;

std::size_t ObjectFile::consumers() const { return impl_ ? impl_->index.consumer_count() : 0; }

MPI_Offset ObjectFile::section_bytes(std::size_t consumer) const {
  if (consumer >= consumers()) {
    throw UsageError(
        ErrorCode::invalid_argument,
        "ObjectFile: consumer " + std::to_string(consumer) + " of " + std::to_string(consumers()));
  }
  return impl_->index.section(consumer).bytes;
}

MPI_Offset ObjectFile::section_offset(std::size_t consumer) const {
  section_bytes(consumer);  // checks the consumer
  return impl_->index.section(consumer).offset;
}

MPI_Offset ObjectFile::requested_bytes(std::size_t consumer) const {
  section_bytes(consumer);  // checks the consumer
  return impl_->index.consumer(consumer).bytes();
}

MPI_Offset ObjectFile::source_bytes() const { return impl_ ? impl_->index.source_size() : 0; }

Future<std::size_t> ObjectFile::iread(std::size_t consumer, MPI_Offset position, void* buffer,
                                      MPI_Count count, MPI_Datatype datatype) {
  if (!impl_) throw UsageError(ErrorCode::file_closed, "ObjectFile::iread: not open");
  const MPI_Offset section = section_bytes(consumer);
  if (position < 0)
    throw UsageError(ErrorCode::invalid_argument, "ObjectFile::iread: negative position");
  if (count < 0) throw UsageError(ErrorCode::invalid_count, "ObjectFile::iread: negative count");
  const std::shared_ptr<const core::FlatType> type = core::flatten_cached(datatype);
  const std::int64_t asked = type->size() * count;
  const std::int64_t available = std::max<std::int64_t>(0, section - position);
  const MPI_Offset at = impl_->index.section(consumer).offset + position;
  // The usual case: the whole request lies in the section, one read.
  if (asked <= available) return impl_->file.iread_at(at, buffer, count, datatype);
  if (available == 0) return make_ready_future<std::size_t>(0);
  // The section ends inside the request, as the source file ended inside
  // the consumer's view: read what there is and leave the rest untouched.
  const core::MemoryLayout layout{type.get(), count, reinterpret_cast<std::int64_t>(buffer)};
  if (layout.contiguous()) {
    return impl_->file.iread_at(at, reinterpret_cast<void*>(layout.address_of(0)), available,
                                MPI_BYTE);
  }
  auto staging = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(available));
  Future<std::size_t> read = impl_->file.iread_at(at, staging->data(), available, MPI_BYTE);
  return read.then(inline_executor(), [staging, type, buffer, count](Future<std::size_t> done) {
    const std::size_t got = done.get();
    core::PieceCursor cursor(*type, count);
    core::Piece piece;
    std::size_t from = 0;
    while (from < got && cursor.next_piece(piece, static_cast<std::int64_t>(got - from))) {
      std::memcpy(static_cast<std::byte*>(buffer) + piece.offset, staging->data() + from,
                  static_cast<std::size_t>(piece.length));
      from += static_cast<std::size_t>(piece.length);
    }
    return got;
  });
}

// The whole request in the section goes through File::read_at, the
// blocking form, which the runtime may serve on this thread.
std::size_t ObjectFile::read(std::size_t consumer, MPI_Offset position, void* buffer,
                             MPI_Count count, MPI_Datatype datatype) {
  if (impl_ && consumer < consumers() && position >= 0 && count >= 0) {
    const runtime::ObjectFileSection& section = impl_->index.section(consumer);
    const std::int64_t asked = core::flatten_cached(datatype)->size() * count;
    if (asked <= section.bytes - position) {
      return impl_->file.read_at(section.offset + position, buffer, count, datatype);
    }
  }
  return iread(consumer, position, buffer, count, datatype).get();
}

void ObjectFile::close() {
  if (!impl_) return;
  impl_->file.close();
  impl_.reset();
}

const File& ObjectFile::file() const {
  if (!impl_) throw UsageError(ErrorCode::file_closed, "ObjectFile::file: not open");
  return impl_->file;
}

}  // namespace flowio
