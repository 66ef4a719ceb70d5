#include "flowio/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "flowio/error.h"
#include "io/direct_io_backend.h"
#include "io/file_descriptor.h"
#include "io/storage_backend.h"
#include "io/view_transfer.h"
#include "runtime/collective_error.h"
#include "runtime/collective_context.h"
#include "runtime/collective_settings.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/core/memory_layout.h"
#include "runtime/engine.h"
#include "runtime/trace.h"

namespace flowio {
namespace {

void validate_mode(Mode mode) {
  const int exclusive_choices = (has(mode, Mode::rdonly) ? 1 : 0) +
                                (has(mode, Mode::wronly) ? 1 : 0) + (has(mode, Mode::rdwr) ? 1 : 0);
  if (exclusive_choices != 1) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "open: give exactly one of Mode::rdonly, Mode::wronly, Mode::rdwr");
  }
  if (has(mode, Mode::rdonly) && (has(mode, Mode::create) || has(mode, Mode::excl))) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "open: Mode::rdonly cannot be combined with Mode::create or Mode::excl");
  }
}

// O_APPEND is never passed: pwrite on an O_APPEND descriptor ignores its
// offset on Linux, and MPI's append mode only moves the initial pointers.
int open_flags(Mode mode, bool creating) {
  int flags = O_CLOEXEC;
  if (has(mode, Mode::rdonly)) flags |= O_RDONLY;
  if (has(mode, Mode::wronly)) flags |= O_WRONLY;
  if (has(mode, Mode::rdwr)) flags |= O_RDWR;
  if (creating && has(mode, Mode::create)) flags |= O_CREAT;
  if (creating && has(mode, Mode::excl)) flags |= O_EXCL;
  return flags;
}

// Opens the descriptor flowio reads and writes through. A file the user
// opens write-only is opened read-write where its permissions allow it:
// aggregators read the holes of a window they sieve, and a shared writable
// mapping needs read access too; neither ever hands the user data read
// from a write-only file. Where the permissions grant writing only, the
// descriptor stays write-only and writes use methods that never read
// (io::WindowIoSettings::file_readable).
io::FileDescriptor open_descriptor(const std::string& path, Mode mode, bool creating,
                                   int extra_flags = 0) {
  const int flags = open_flags(mode, creating) | extra_flags;
  if (has(mode, Mode::wronly)) {
    try {
      return io::FileDescriptor::open(path, (flags & ~O_ACCMODE) | O_RDWR);
    } catch (const IoError& error) {
      if (error.code() != ErrorCode::access_denied) throw;
    }
  }
  return io::FileDescriptor::open(path, flags);
}

}  // namespace

struct File::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path;
  Mode mode = Mode::rdonly;
  Hints hints;
  io::FileDescriptor fd;
  io::FileDescriptor direct_fd;  // O_DIRECT, with the hint flowio_direct_io
  std::unique_ptr<io::StorageBackend> backend;
  std::shared_ptr<runtime::Engine> engine;
  std::shared_ptr<const core::FileView> view = std::make_shared<core::FileView>();
  MPI_Offset pointer = 0;  // individual file pointer, in etypes
  int ranks = 1;
  // Declared after the engine, backend and descriptor it borrows, so it
  // is destroyed before them.
  std::unique_ptr<runtime::CollectiveContext> collective;

  // Operations started and not finished. Tasks refer to this Impl by
  // pointer; it is destroyed only once this count is zero.
  std::mutex mutex;
  std::condition_variable idle;
  std::size_t pending = 0;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ~Impl() {
    wait_idle();
    collective.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }

  void wait_idle() {
    std::unique_lock lock(mutex);
    idle.wait(lock, [this] { return pending == 0; });
  }

  // Opens the second, O_DIRECT descriptor and routes aligned requests to
  // it. Where the file system refuses O_DIRECT, I/O stays buffered and the
  // hint reports "disable".
  void open_direct();

  // Hints given after open; the storage ones were settled at open.
  void merge_hints(const Hints& more) {
    for (const auto& [key, value] : more) {
      if (key != "flowio_io_backend" && key != "flowio_direct_io") hints[key] = value;
    }
    settings_for.fill(nullptr);
    forget_plans();
  }

  // Compiled collective plans assume the view, the hints and the file's
  // size as they were: each change drops them (between operations).
  void forget_plans() {
    if (collective) collective->forget_plans(collective_settings(true)->plans_kept);
  }

  // The collective settings the hints give, parsed once per direction
  // (until the hints change) rather than at every call, and shared by the
  // calls.
  const std::shared_ptr<const runtime::CollectiveSettings>& collective_settings(bool writing) {
    std::shared_ptr<const runtime::CollectiveSettings>& kept = settings_for[writing ? 1 : 0];
    if (!kept) {
      auto settings = std::make_shared<runtime::CollectiveSettings>(
          runtime::CollectiveSettings::from_hints(hints, ranks, writing));
      settings->window_io.file_readable = fd.readable();
      kept = std::move(settings);
    }
    return kept;
  }
  std::array<std::shared_ptr<const runtime::CollectiveSettings>, 2> settings_for;

  void begin_operation() {
    std::lock_guard lock(mutex);
    ++pending;
  }

  // The last touch of this Impl by a task: once `pending` reaches zero a
  // waiting thread may destroy it.
  void end_operation() {
    std::lock_guard lock(mutex);
    if (--pending == 0) idle.notify_all();
  }

  // A data access checked and flattened at the call.
  struct Transfer {
    std::shared_ptr<const core::FlatType> memory_type;
    core::MemoryLayout memory;
    std::int64_t stream_position = 0;  // in the view's stream, in bytes
  };
  // Checks the arguments of a data access (UsageError when bad). With
  // `advance_pointer`, the individual file pointer moves past the data at
  // once, as MPI says it does at the call.
  Transfer prepare_transfer(bool writing, MPI_Offset offset, const void* buffer, MPI_Count count,
                            MPI_Datatype datatype, bool advance_pointer);

  // Starts a read or write of `count` copies of `datatype` at view offset
  // `offset` (in etypes). With `advance_pointer`, the individual file
  // pointer moves past the data at once, as MPI says it does at the call.
  Future<std::size_t> start_transfer(bool writing, MPI_Offset offset, const void* buffer,
                                     MPI_Count count, MPI_Datatype datatype,
                                     bool advance_pointer = false);
  // The same, as a collective operation (runtime/collective_context.h).
  Future<std::size_t> start_collective(bool writing, MPI_Offset offset, const void* buffer,
                                       MPI_Count count, MPI_Datatype datatype,
                                       bool advance_pointer = false, bool blocking = false);
};

File::File() noexcept = default;
File::File(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

bool File::is_open() const noexcept { return impl_ != nullptr; }

File::Impl& File::impl() const {
  if (!impl_) throw UsageError(ErrorCode::file_closed, "the file is not open");
  return *impl_;
}

void File::Impl::open_direct() {
  try {
    direct_fd = open_descriptor(path, mode, false, O_DIRECT);
  } catch (const IoError&) {
    hints["flowio_direct_io"] = "disable";
    return;
  }
  backend = std::make_unique<io::DirectIoBackend>(std::move(backend), fd.get(), direct_fd.get());
}

File File::open(MPI_Comm comm, const std::string& path, Mode mode, const Hints& hints) {
  validate_mode(mode);
  if (comm == MPI_COMM_NULL) throw UsageError(ErrorCode::invalid_argument, "open: MPI_COMM_NULL");
  auto impl = std::make_unique<Impl>();
  impl->engine = runtime::Engine::acquire();
  check_mpi(MPI_Comm_dup(comm, &impl->comm), "MPI_Comm_dup");
  // Failures come back as codes, to become exceptions, not abort.
  MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(impl->comm, &impl->rank);
  impl->path = path;
  impl->mode = mode;
  impl->hints = hints;

  runtime::run_collectively(impl->comm, "open", [&] {
    const auto requested = hints.find("flowio_io_backend");
    impl->backend = io::make_storage_backend(requested == hints.end()
                                                 ? io::BackendKind::automatic
                                                 : io::parse_backend_kind(requested->second));
    impl->hints["flowio_io_backend"] = impl->backend->name();
  });
  // Rank 0 creates the file alone, so that Mode::excl fails on one
  // process and is reported to all; the others open what now exists.
  runtime::run_collectively(impl->comm, "open", [&] {
    if (impl->rank == 0) impl->fd = open_descriptor(path, mode, true);
  });
  runtime::run_collectively(impl->comm, "open", [&] {
    if (impl->rank != 0) impl->fd = open_descriptor(path, mode, false);
  });
  if (has(mode, Mode::append)) impl->pointer = impl->fd.size();
  if (const auto direct = hints.find("flowio_direct_io");
      direct != hints.end() && direct->second == "enable") {
    impl->open_direct();
  }
  MPI_Comm_size(impl->comm, &impl->ranks);
  impl->collective = std::make_unique<runtime::CollectiveContext>(impl->comm, impl->fd,
                                                                  *impl->backend, *impl->engine);
  impl->forget_plans();
  return File(std::move(impl));
}

void File::close() {
  Impl& file = impl();
  file.wait_idle();
  runtime::Trace::process().write(file.comm);
  file.collective.reset();
  runtime::run_collectively(file.comm, "close", [&] { file.fd.close(); });
  std::unique_ptr<Impl> closing = std::move(impl_);
  runtime::run_collectively(closing->comm, "close", [&] {
    if (closing->rank == 0 && has(closing->mode, Mode::delete_on_close) &&
        ::unlink(closing->path.c_str()) != 0) {
      throw_errno(errno, "close: unlink " + closing->path);
    }
  });
}

void File::set_view(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype,
                    const Hints& hints) {
  Impl& file = impl();
  file.wait_idle();
  std::shared_ptr<const core::FileView> view;
  runtime::run_collectively(file.comm, "set_view", [&] {
    view = std::make_shared<core::FileView>(displacement, etype, filetype);
  });
  file.view = std::move(view);
  file.pointer = 0;
  file.merge_hints(hints);
  file.forget_plans();
}

void File::set_hints(const Hints& hints) {
  Impl& file = impl();
  file.wait_idle();
  file.merge_hints(hints);
}

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
  if (buffer == nullptr && count > 0) {
    throw UsageError(ErrorCode::invalid_argument, std::string(operation) + ": null buffer");
  }
  Transfer transfer;
  transfer.memory_type = core::flatten_cached(datatype);
  const std::int64_t bytes = transfer.memory_type->size() * count;
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
  transfer.memory =
      core::MemoryLayout{transfer.memory_type.get(), count, reinterpret_cast<std::int64_t>(buffer)};
  transfer.stream_position = offset * view->etype_size();
  if (advance_pointer) pointer = offset + bytes / view->etype_size();
  return transfer;
}

Future<std::size_t> File::Impl::start_transfer(bool writing, MPI_Offset offset, const void* buffer,
                                               MPI_Count count, MPI_Datatype datatype,
                                               bool advance_pointer) {
  Transfer transfer = prepare_transfer(writing, offset, buffer, count, datatype, advance_pointer);
  auto promise = std::make_shared<Promise<std::size_t>>();
  Future<std::size_t> future = promise->get_future();
  begin_operation();
  engine->submit([this, writing, transfer = std::move(transfer), promise, view = view]() {
    try {
      const std::int64_t moved =
          writing ? io::write_to_view(*backend, fd.get(), *view, transfer.stream_position,
                                      transfer.memory)
                  : io::read_from_view(*backend, fd.get(), *view, transfer.stream_position,
                                       transfer.memory);
      promise->set_value(static_cast<std::size_t>(moved));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
    end_operation();
  });
  return future;
}

Future<std::size_t> File::Impl::start_collective(bool writing, MPI_Offset offset,
                                                 const void* buffer, MPI_Count count,
                                                 MPI_Datatype datatype, bool advance_pointer,
                                                 bool blocking) {
  runtime::CollectiveRequest request;
  request.blocking = blocking;
  request.settings = collective_settings(writing);
  Transfer transfer = prepare_transfer(writing, offset, buffer, count, datatype, advance_pointer);
  request.writing = writing;
  request.access = core::Access(view, transfer.stream_position,
                                transfer.stream_position + transfer.memory.bytes());
  request.memory_type = std::move(transfer.memory_type);
  request.memory = transfer.memory;
  begin_operation();
  try {
    return runtime::start_collective(*collective, std::move(request), [this] { end_operation(); });
  } catch (...) {
    end_operation();
    throw;
  }
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

Future<std::size_t> File::iwrite_at_all(MPI_Offset offset, const void* buffer, MPI_Count count,
                                        MPI_Datatype datatype) {
  return impl().start_collective(true, offset, buffer, count, datatype);
}

Future<std::size_t> File::iread_at_all(MPI_Offset offset, void* buffer, MPI_Count count,
                                       MPI_Datatype datatype) {
  return impl().start_collective(false, offset, buffer, count, datatype);
}

Future<std::size_t> File::iwrite_all(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_collective(true, file.pointer, buffer, count, datatype, true);
}

Future<std::size_t> File::iread_all(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_collective(false, file.pointer, buffer, count, datatype, true);
}

// The blocking forms tell the runtime that the caller waits at once, so it
// may do the work on this thread.
std::size_t File::write_at_all(MPI_Offset offset, const void* buffer, MPI_Count count,
                               MPI_Datatype datatype) {
  return impl().start_collective(true, offset, buffer, count, datatype, false, true).get();
}

std::size_t File::read_at_all(MPI_Offset offset, void* buffer, MPI_Count count,
                              MPI_Datatype datatype) {
  return impl().start_collective(false, offset, buffer, count, datatype, false, true).get();
}

std::size_t File::write_all(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_collective(true, file.pointer, buffer, count, datatype, true, true).get();
}

std::size_t File::read_all(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.start_collective(false, file.pointer, buffer, count, datatype, true, true).get();
}

std::vector<OperationStatistics> File::statistics() const {
  return impl().collective->statistics();
}

std::size_t File::write_at(MPI_Offset offset, const void* buffer, MPI_Count count,
                           MPI_Datatype datatype) {
  return iwrite_at(offset, buffer, count, datatype).get();
}

std::size_t File::read_at(MPI_Offset offset, void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return iread_at(offset, buffer, count, datatype).get();
}

std::size_t File::write(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return iwrite(buffer, count, datatype).get();
}

std::size_t File::read(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  return iread(buffer, count, datatype).get();
}

void File::seek(MPI_Offset offset, Whence whence) {
  Impl& file = impl();
  MPI_Offset base = 0;
  if (whence == Whence::current) base = file.pointer;
  if (whence == Whence::end) base = position_of_end();
  if (base + offset < 0) {
    throw UsageError(ErrorCode::invalid_argument, "seek: the position would be negative");
  }
  file.pointer = base + offset;
}

MPI_Offset File::position() const { return impl().pointer; }

MPI_Offset File::position_of_end() const {
  const Impl& file = impl();
  return file.view->stream_bytes_before(file.fd.size()) / file.view->etype_size();
}

MPI_Offset File::byte_offset(MPI_Offset offset) const {
  const Impl& file = impl();
  if (offset < 0) throw UsageError(ErrorCode::invalid_argument, "byte_offset: negative offset");
  return file.view->file_offset_of(offset * file.view->etype_size());
}

void File::sync() {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "sync", [&] { file.fd.sync(); });
}

MPI_Offset File::size() const { return impl().fd.size(); }

namespace {

void check_size_argument(MPI_Offset bytes, Mode mode, const char* operation) {
  if (bytes < 0) {
    throw UsageError(ErrorCode::invalid_argument, std::string(operation) + ": negative size");
  }
  if (has(mode, Mode::rdonly)) {
    throw UsageError(ErrorCode::read_only, std::string(operation) + ": read-only file");
  }
}

}  // namespace

// Size changes are made once, by rank 0, after every process has finished
// what it did before the call, so that none of it sees the change early.
void File::set_size(MPI_Offset bytes) {
  Impl& file = impl();
  check_size_argument(bytes, file.mode, "set_size");
  file.wait_idle();
  check_mpi(MPI_Barrier(file.comm), "MPI_Barrier");
  runtime::run_collectively(file.comm, "set_size", [&] {
    if (file.rank == 0) file.fd.truncate(bytes);
  });
  file.forget_plans();
}

void File::preallocate(MPI_Offset bytes) {
  Impl& file = impl();
  check_size_argument(bytes, file.mode, "preallocate");
  file.wait_idle();
  check_mpi(MPI_Barrier(file.comm), "MPI_Barrier");
  runtime::run_collectively(file.comm, "preallocate", [&] {
    if (file.rank == 0) file.fd.preallocate(bytes);
  });
  file.forget_plans();
}

namespace {

// The hints flowio acts on (hints.h). Others are ignored, as MPI says, and
// not reported as in force.
bool is_known_hint(const std::string& key) {
  static const std::set<std::string> known = {
      "cb_buffer_size",      "cb_nodes",
      "flowio_aggregators",  "flowio_buffers_in_flight",
      "flowio_direct_io",    "flowio_direct_threshold",
      "flowio_durable",      "flowio_plan_cache",
      "flowio_ds_mapping",   "flowio_ds_threshold",
      "flowio_exchange",     "flowio_io_backend",
      "flowio_realm_policy", "romio_cb_fr_alignment",
      "romio_cb_pfr",        "romio_cb_read",
      "romio_cb_write",      "romio_ds_read",
      "romio_ds_write",      "striping_unit",
  };
  return known.count(key) != 0;
}

}  // namespace

Hints File::hints() const {
  const Impl& file = impl();
  Hints in_force;
  for (const auto& [key, value] : file.hints) {
    if (is_known_hint(key)) in_force.emplace(key, value);
  }
  // The values collective operations would use now, defaults included.
  const auto writes = runtime::CollectiveSettings::from_hints(file.hints, file.ranks, true);
  const auto reads = runtime::CollectiveSettings::from_hints(file.hints, file.ranks, false);
  auto buffering = [](runtime::CollectiveSettings::Buffering mode) {
    using Buffering = runtime::CollectiveSettings::Buffering;
    return mode == Buffering::enable    ? "enable"
           : mode == Buffering::disable ? "disable"
                                        : "automatic";
  };
  auto sieving = [](io::SieveMode mode) {
    return mode == io::SieveMode::enable    ? "enable"
           : mode == io::SieveMode::disable ? "disable"
                                            : "automatic";
  };
  in_force["cb_buffer_size"] = std::to_string(writes.realms.window_bytes);
  in_force["flowio_buffers_in_flight"] = std::to_string(writes.buffers_in_flight);
  in_force["cb_nodes"] = std::to_string(writes.aggregator_ranks.size());
  in_force["flowio_realm_policy"] = core::realm_policy_name(writes.realms.policy);
  in_force["flowio_exchange"] = writes.alltoallw ? "alltoallw" : "point_to_point";
  in_force["romio_cb_write"] = buffering(writes.buffering);
  in_force["romio_cb_read"] = buffering(reads.buffering);
  in_force["romio_ds_write"] = sieving(writes.window_io.sieve);
  in_force["romio_ds_read"] = sieving(reads.window_io.sieve);
  in_force["flowio_ds_threshold"] = std::to_string(writes.window_io.sieve_threshold);
  in_force["flowio_ds_mapping"] = sieving(writes.window_io.mapping);
  in_force["flowio_direct_threshold"] = std::to_string(writes.direct_threshold);
  in_force["flowio_durable"] = writes.durable ? "enable" : "disable";
  in_force["flowio_plan_cache"] = std::to_string(writes.plans_kept);
  in_force.try_emplace("flowio_direct_io", "disable");
  return in_force;
}
Mode File::mode() const { return impl().mode; }
MPI_Comm File::communicator() const { return impl().comm; }
const std::string& File::path() const { return impl().path; }

}  // namespace flowio
