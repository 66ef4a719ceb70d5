// File::open and File::close, the storage hints that only open reads, and
// what open was given (mode, communicator, path).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "api/file_impl.h"
#include "api/system_hints.h"
#include "io/direct_io_backend.h"
#include "runtime/engine/collective_error.h"
#include "runtime/stages/trace.h"
#include "sync/lock_settings.h"

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

// At open, the program's hints over the system hints file's: a value flowio
// refuses is reported as the program's, or as the file's when only the
// file's hints make it fail.
void check_open_hints(const Hints& merged, const Hints& given, int ranks) {
  try {
    check_hints(merged, ranks);
  } catch (const UsageError& refused) {
    check_hints(given, ranks);
    throw UsageError(ErrorCode::invalid_hint, std::string(refused.what()) +
                                                  " (set by the system hints file " +
                                                  system_hints().source + ")");
  }
}

// The storage hints, which only open reads.
io::BackendKind backend_kind_of(const Hints& hints) {
  const auto requested = hints.find("flowio_io_backend");
  if (requested == hints.end()) return io::BackendKind::automatic;
  try {
    return io::parse_backend_kind(requested->second);
  } catch (const UsageError& error) {
    throw UsageError(ErrorCode::invalid_hint,
                     std::string("hint flowio_io_backend: ") + error.what());
  }
}

// flowio_mapped_io (hints.h): whether small rewrites and re-reads may go
// through the file's kept mapping (io/mapped_backend.h).
bool mapped_io_allowed(const Hints& hints) {
  const auto mapped = hints.find("flowio_mapped_io");
  if (mapped == hints.end() || mapped->second == "enable") return true;
  if (mapped->second == "disable") return false;
  throw UsageError(
      ErrorCode::invalid_hint,
      "hint flowio_mapped_io: expected enable or disable, got \"" + mapped->second + "\"");
}

bool direct_io_asked(const Hints& hints) {
  const auto direct = hints.find("flowio_direct_io");
  if (direct == hints.end() || direct->second == "disable") return false;
  if (direct->second == "enable") return true;
  throw UsageError(
      ErrorCode::invalid_hint,
      "hint flowio_direct_io: expected enable or disable, got \"" + direct->second + "\"");
}

// Opens the descriptor flowio reads and writes through. A file the user
// opens write-only is opened read-write where its permissions allow it:
// aggregators read the holes of a window they sieve, and a shared writable
// mapping needs read access too; neither ever hands the user data read
// from a write-only file. Where the permissions grant writing only, the
// descriptor stays write-only and writes use methods that never read
// (io::WindowIoSettings::file_readable).
//
// A file created gets what the process's umask allows of read and write
// for all, as ROMIO (MPI leaves it to the implementation without the
// file_perm hint) and open(2)-based tools create files.
io::FileDescriptor open_descriptor(const std::string& path, Mode mode, bool creating,
                                   int extra_flags = 0) {
  constexpr mode_t kNewFileMode = 0666;
  const int flags = open_flags(mode, creating) | extra_flags;
  if (has(mode, Mode::wronly)) {
    try {
      return io::FileDescriptor::open(path, (flags & ~O_ACCMODE) | O_RDWR, kNewFileMode);
    } catch (const IoError& error) {
      if (error.code() != ErrorCode::access_denied) throw;
    }
  }
  return io::FileDescriptor::open(path, flags, kNewFileMode);
}

}  // namespace

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

// The arguments are checked after the first collective step, and agreed
// on, so that a bad mode or hint on one process fails the call on every
// process instead of leaving the others waiting.
File File::open(MPI_Comm comm, const std::string& path, Mode mode, const Hints& hints) {
  if (comm == MPI_COMM_NULL) throw UsageError(ErrorCode::invalid_argument, "open: MPI_COMM_NULL");
  auto impl = std::make_unique<Impl>();
  impl->engine = runtime::Engine::acquire();
  check_mpi(MPI_Comm_dup(comm, &impl->comm), "MPI_Comm_dup");
  // Failures come back as codes, to become exceptions, not abort.
  MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(impl->comm, &impl->rank);
  MPI_Comm_size(impl->comm, &impl->ranks);
  impl->path = path;
  impl->mode = mode;
  impl->hints = with_system_hints(hints);

  // One allreduce tells whether any process passed an invalid mode,
  // whether every process passed the same one, whether every process
  // chose the same slot for the shared file pointer (shared_pointer.h),
  // and whether the hints turn write-behind on everywhere or nowhere (its
  // writes check their arguments on every process at the call; a value
  // that is no byte count fails the hints' check below instead).
  std::exception_ptr bad_mode;
  try {
    validate_mode(mode);
  } catch (const UsageError&) {
    bad_mode = std::current_exception();
  }
  std::int64_t behind = 0;
  try {
    behind = write_behind_budget(impl->hints) > 0 ? 1 : 0;
  } catch (const UsageError&) {
    behind = -1;
  }
  HeldPointerSlot pointer_slot(impl->comm);
  const auto mode_bits = static_cast<std::int64_t>(mode);
  const std::int64_t mine[10] = {bad_mode ? -1 : 0,
                                 mode_bits,
                                 -mode_bits,
                                 pointer_slot.window_id(),
                                 -pointer_slot.window_id(),
                                 pointer_slot.slot(),
                                 -pointer_slot.slot(),
                                 behind,
                                 -behind,
                                 behind < 0 ? -1 : 0};
  std::int64_t least[10] = {};
  check_mpi(MPI_Allreduce(mine, least, 10, MPI_INT64_T, MPI_MIN, impl->comm), "MPI_Allreduce");
  if (bad_mode) std::rethrow_exception(bad_mode);
  if (least[0] < 0) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "open: another process passed an invalid access mode");
  }
  require_same(least[1] == -least[2], "open: the access mode");
  const bool same_pointer_slot = least[3] == -least[4] && least[5] == -least[6];
  if (least[9] == 0) {
    require_same(least[7] == -least[8], "open: whether hint flowio_write_behind is on");
  }
  // One agreed step: every process checks the hints, then opens at once,
  // creating the file if asked (O_CREAT without O_EXCL is atomic: one
  // process creates it, the others open it). With Mode::excl, rank 0
  // creates the file alone first, so that an existing file fails on one
  // process and is reported to all; the others open it in a second step.
  const bool exclusive = has(mode, Mode::create) && has(mode, Mode::excl);
  bool direct_io = false;
  bool mapped_io = false;
  runtime::run_collectively(impl->comm, "open", [&] {
    check_open_hints(impl->hints, hints, impl->ranks);
    impl->write_behind.set_budget(write_behind_budget(impl->hints));
    sync::LockSettings::from_hints(impl->hints);
    direct_io = direct_io_asked(impl->hints);
    mapped_io = mapped_io_allowed(impl->hints);
    impl->backend = io::make_storage_backend(
        backend_kind_of(impl->hints), [&impl](std::unique_ptr<io::StorageBackend> chosen) {
          auto layer = std::make_unique<io::MappedBackend>(std::move(chosen));
          impl->mapped_layer = layer.get();
          return std::unique_ptr<io::StorageBackend>(std::move(layer));
        });
    impl->hints["flowio_io_backend"] = impl->backend->name();
    if (!exclusive || impl->rank == 0) impl->fd = open_descriptor(path, mode, true);
  });
  if (exclusive) {
    runtime::run_collectively(impl->comm, "open", [&] {
      if (impl->rank != 0) impl->fd = open_descriptor(path, mode, false);
    });
  }
  impl->sieve_lock = std::make_unique<io::SieveLock>(impl->fd.get());
  impl->mapping = std::make_unique<io::FileMapping>(impl->fd.get());
  // Direct I/O asks for data to bypass the page cache: not through it by
  // mapping either.
  if (mapped_io && !direct_io) impl->mapped_layer->attach(impl->mapping.get());
  impl->shared =
      std::make_unique<SharedPointer>(impl->comm, std::move(pointer_slot), same_pointer_slot);
  // Append mode puts both file pointers at the end; in bytes, as the view
  // at open is.
  if (has(mode, Mode::append)) {
    impl->pointer = impl->fd.size();
    impl->shared->set(impl->pointer);
  }
  if (direct_io) impl->open_direct();
  runtime::Trace::process().record_open(impl->rank, path, impl->hints);
  return File(std::move(impl));
}

void File::close() {
  Impl& file = impl();
  file.wait_idle();
  runtime::Trace::process().write(file.comm);
  if (file.atomic) file.set_atomicity(false);
  file.collective.reset();
  file.mapping->forget();
  std::unique_ptr<Impl> closing = std::move(impl_);
  std::exception_ptr failure;
  try {
    runtime::run_collectively(closing->comm, "close", [&] { closing->fd.close(); });
  } catch (...) {
    failure = std::current_exception();
  }
  // Every process has stopped using the shared pointer once the close's
  // agreement is over, failed or not: its slot goes back for the next file.
  closing->shared.reset();
  if (failure) std::rethrow_exception(failure);
  // Removed once every process has closed it (the step above), as some
  // file systems do not let an open file go.
  if (has(closing->mode, Mode::delete_on_close)) {
    runtime::run_collectively(closing->comm, "close", [&] {
      if (closing->rank == 0 && ::unlink(closing->path.c_str()) != 0) {
        throw_errno(errno, "close: unlink " + closing->path);
      }
    });
  }
  // A write behind that failed, if close is the first call to learn of it.
  closing->report_write_behind_failure();
}

Mode File::mode() const { return impl().mode; }
MPI_Comm File::communicator() const { return impl().comm; }
const std::string& File::path() const { return impl().path; }

}  // namespace flowio
