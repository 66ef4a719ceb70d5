// Independent transfers: the argument checks every data call shares
// (prepare_transfer), the sieve lock's guard of independent writes, and
// the blocking and nonblocking independent reads and writes.
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "api/file_impl.h"
#include "io/independent_transfer.h"
#include "io/view_transfer.h"
#include "runtime/core/datatype_checks.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/stages/converted_transfer.h"

namespace flowio {
namespace {

// Nonblocking independent accesses of at most this many bytes are carried
// out at the call: a 4 KiB write to the page cache takes about a
// microsecond, less than handing it to a thread and waking the waiter
// (MPICH's MPI-IO does all its nonblocking file I/O at the call).
constexpr std::int64_t kAtTheCallBytes = 65536;
}  // namespace

File::Impl::Transfer File::Impl::prepare_transfer(bool writing, MPI_Offset offset,
                                                  const void* buffer, MPI_Count count,
                                                  MPI_Datatype datatype, bool advance_pointer) {
  const char* operation = writing ? "write" : "read";
  if (writing && has(mode, Mode::rdonly)) {
    throw UsageError(ErrorCode::read_only, std::string(operation) + ": the file is read-only");
  }
  if (!writing && has(mode, Mode::wronly)) {
    throw UsageError(ErrorCode::access_denied, std::string(operation) + ": the file is write-only");
  }
  if (count < 0)
    throw UsageError(ErrorCode::invalid_count, std::string(operation) + ": negative count");
  if (offset < 0) {
    throw UsageError(ErrorCode::invalid_argument, std::string(operation) + ": negative offset");
  }
  core::require_committed(datatype, operation);
  Transfer transfer;
  // MPI_BYTE, the type of nearly every small call (HDF5 moves bytes), is
  // flattened once per process instead of once per call, and held without
  // a reference count (an aliasing pointer with no owner), so that passing
  // it along costs no atomic operation.
  static const core::FlatType byte_flat = *core::flatten_cached(MPI_BYTE);
  static const std::shared_ptr<const core::FlatType> byte_type(
      std::shared_ptr<const core::FlatType>(), &byte_flat);
  transfer.memory_type = datatype == MPI_BYTE ? byte_type : core::flatten_cached(datatype);
  const core::FlatType& type = *transfer.memory_type;
  std::int64_t bytes = 0;
  std::int64_t span = 0;
  if (__builtin_mul_overflow(type.size(), count, &bytes) ||
      (count > 0 && __builtin_mul_overflow(type.extent(), count - 1, &span))) {
    throw UsageError(ErrorCode::invalid_count, std::string(operation) + ": " +
                                                   std::to_string(count) +
                                                   " copies of the datatype overflow 64 bits");
  }
  // A null buffer is MPI_BOTTOM: valid with a datatype of absolute
  // addresses, whose data lies far above the first page; data in the
  // first page is a null buffer passed by mistake.
  constexpr std::int64_t kFirstPage = 4096;
  if (buffer == nullptr && bytes > 0 && type.true_lb() < kFirstPage) {
    throw UsageError(ErrorCode::invalid_buffer, std::string(operation) + ": null buffer for " +
                                                    std::to_string(bytes) + " bytes of data");
  }
  transfer.memory =
      core::MemoryLayout{transfer.memory_type.get(), count, reinterpret_cast<std::int64_t>(buffer)};
  // Sizes, offsets and the file pointer count the view's stream, in the
  // representation's bytes.
  if (!representation->is_native()) {
    transfer.conversion = std::make_shared<exchange::StreamConversion>(
        representation, transfer.memory_type, transfer.memory, datatype);
    bytes = transfer.conversion->file_bytes();
    // Characters and bytes are the same in every representation: moved as
    // in native, without staging.
    if (transfer.conversion->keeps_bytes()) transfer.conversion.reset();
  }
  transfer.stream_bytes = bytes;
  if (bytes % view->etype_size() != 0) {
    throw UsageError(ErrorCode::invalid_datatype,
                     std::string(operation) + ": " + std::to_string(bytes) +
                         " bytes is not a whole number of etypes of " +
                         std::to_string(view->etype_size()) + " bytes");
  }
  if (bytes > 0 && view->filetype().size() == 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     std::string(operation) + ": the view's filetype holds no data");
  }
  std::int64_t end = 0;
  if (__builtin_mul_overflow(offset, view->etype_size(), &transfer.stream_position) ||
      __builtin_add_overflow(transfer.stream_position, bytes, &end) || end > view->stream_reach()) {
    throw UsageError(ErrorCode::invalid_argument,
                     std::string(operation) + ": offset " + std::to_string(offset) + " and " +
                         std::to_string(bytes) + " bytes reach past file offset 2^62");
  }
  if (advance_pointer) pointer = offset + bytes / view->etype_size();
  return transfer;
}

File::Impl::WriteGuard File::Impl::guard_write(const Transfer& transfer) {
  WriteGuard guard;
  if (!holes_in_some_view) {
    std::lock_guard lock(mutex);
    if (collective_writes == 0) {
      ++unlocked_writes;
      guard.unlocked_of_ = this;
      return guard;
    }
  }
  const core::Access access = access_of(transfer);
  if (!access.empty()) guard.held_ = sieve_lock->lock(access.file_begin(), access.file_end());
  return guard;
}

std::int64_t File::Impl::transfer(bool writing, const Transfer& transfer,
                                  const core::FileView& on_view, bool may_rewrite_extent) {
  // In atomic mode too: a write of objects private to its process takes no
  // lease, and a collective operation that needs none sieves all the same.
  const WriteGuard guard = writing ? guard_write(transfer) : WriteGuard();
  may_rewrite_extent = may_rewrite_extent || guard.holds_extent();
  if (transfer.conversion) {
    const std::int64_t stream_bytes =
        writing ? runtime::write_converted(*backend, fd.get(), on_view, transfer.stream_position,
                                           *transfer.conversion, runtime::kConversionChunkBytes,
                                           engine->arena())
                : runtime::read_converted(*backend, fd.get(), on_view, transfer.stream_position,
                                          *transfer.conversion, runtime::kConversionChunkBytes,
                                          engine->arena());
    return transfer.conversion->memory_bytes_within(stream_bytes);
  }
  // A view whose pieces overlap (read-only files) has pieces out of order:
  // the naive method reads them one by one, as the view lists them.
  if (on_view.overlaps()) {
    return io::read_from_view(*backend, fd.get(), on_view, transfer.stream_position,
                              transfer.memory);
  }
  const io::WindowIoSettings& methods = collective_settings(writing)->window_io;
  return writing ? io::write_independent(*backend, fd.get(), *mapping, on_view,
                                         transfer.stream_position, transfer.memory, methods,
                                         may_rewrite_extent)
                 : io::read_independent(*backend, fd.get(), *mapping, on_view,
                                        transfer.stream_position, transfer.memory, methods);
}

std::size_t File::Impl::run_transfer(bool writing, MPI_Offset offset, const void* buffer,
                                     MPI_Count count, MPI_Datatype datatype, bool advance_pointer) {
  const Transfer prepared =
      prepare_transfer(writing, offset, buffer, count, datatype, advance_pointer);
  before_independent_access(prepared);
  if (!atomic) return static_cast<std::size_t>(transfer(writing, prepared, *view));
  // Atomic mode: the lease (if the access needs one) is held around the
  // I/O on this thread.
  const core::Access access = access_of(prepared);
  const sync::Lease lease = atomic->lock_access(access, writing).get();
  const bool rewrite = writing && atomic->may_rewrite_extent(access, lease.held());
  return static_cast<std::size_t>(transfer(writing, prepared, *view, rewrite));
}

Future<std::size_t> File::Impl::start_transfer(bool writing, MPI_Offset offset, const void* buffer,
                                               MPI_Count count, MPI_Datatype datatype,
                                               bool advance_pointer) {
  Transfer prepared = prepare_transfer(writing, offset, buffer, count, datatype, advance_pointer);
  before_independent_access(prepared);
  // Atomic mode: an access of objects private to this process needs no
  // lease, and may go at the call like any other.
  std::optional<core::Access> atomic_access;
  if (atomic) atomic_access = access_of(prepared);
  if ((!atomic || !atomic->needs_lock(*atomic_access)) &&
      prepared.memory.bytes() <= kAtTheCallBytes) {
    try {
      const bool rewrite =
          atomic && writing && atomic->may_rewrite_extent(*atomic_access, /*leased=*/false);
      return make_ready_future(
          static_cast<std::size_t>(transfer(writing, prepared, *view, rewrite)));
    } catch (...) {
      return make_exception_future<std::size_t>(std::current_exception());
    }
  }
  auto promise = std::make_shared<Promise<std::size_t>>();
  Future<std::size_t> future = promise->get_future();
  // Collective settings are parsed here, on the caller's thread, which
  // alone may change the hints.
  collective_settings(writing);
  begin_operation();
  // Atomic mode: held around the I/O, released before the Future is ready.
  auto lease = std::make_shared<sync::Lease>();
  // File I/O runs on the I/O thread, never on a oneTBB worker.
  // Whatever it holds of atomic mode is let go before end_operation():
  // after it the file may turn atomic mode off and close, and the lock
  // must then go on the caller's thread (an fcntl lock destroyed on its
  // own waiter thread, which ran this, would join itself).
  std::function<void()> task = [this, writing, prepared = std::move(prepared), promise, view = view,
                                lease, atomic_mode = atomic, atomic_access]() mutable {
    try {
      const bool rewrite =
          atomic_mode && writing && atomic_mode->may_rewrite_extent(*atomic_access, lease->held());
      const std::int64_t moved = transfer(writing, prepared, *view, rewrite);
      lease->release();
      promise->set_value(static_cast<std::size_t>(moved));
    } catch (...) {
      lease->release();
      promise->set_exception(std::current_exception());
    }
    atomic_mode.reset();
    end_operation();
  };
  if (!atomic) {
    engine->io().post(std::move(task));
    return future;
  }
  // The task runs once the lease is held; nobody waits for it meanwhile.
  atomic->lock_access(*atomic_access, writing)
      .then(inline_executor(),
            [this, lease, promise, task = std::move(task)](Future<sync::Lease> held) mutable {
              try {
                *lease = held.get();
              } catch (...) {
                promise->set_exception(std::current_exception());
                task = nullptr;  // its hold on atomic mode, as above
                end_operation();
                return;
              }
              engine->io().post(std::move(task));
            });
  return future;
}

Future<std::size_t> File::iwrite_at(MPI_Offset offset, const void* buffer, MPI_Count count,
                                    MPI_Datatype datatype) {
  return impl().start_transfer(true, offset, buffer, count, datatype);
}

Future<std::size_t> File::iread_at(MPI_Offset offset, void* buffer, MPI_Count count,
                                   MPI_Datatype datatype) {
  return impl().start_transfer(false, offset, buffer, count, datatype);
}

Future<std::size_t> File::iwrite(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_transfer(true, file.pointer, buffer, count, datatype, true);
}

Future<std::size_t> File::iread(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_transfer(false, file.pointer, buffer, count, datatype, true);
}

// The blocking independent forms run on the caller's thread: no hand-off,
// no future.
std::size_t File::write_at(MPI_Offset offset, const void* buffer, MPI_Count count,
                           MPI_Datatype datatype) {
  return impl().run_transfer(true, offset, buffer, count, datatype);
}

std::size_t File::read_at(MPI_Offset offset, void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return impl().run_transfer(false, offset, buffer, count, datatype);
}

std::size_t File::write(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.run_transfer(true, file.pointer, buffer, count, datatype, true);
}

std::size_t File::read(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.run_transfer(false, file.pointer, buffer, count, datatype, true);
}

}  // namespace flowio
