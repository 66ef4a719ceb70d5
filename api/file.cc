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
#include <utility>

#include "api/system_hints.h"
#include "exchange/compression_rule.h"
#include "exchange/data_representation.h"
#include "exchange/stream_conversion.h"
#include "flowio/error.h"
#include "io/direct_io_backend.h"
#include "io/file_descriptor.h"
#include "io/file_mapping.h"
#include "io/independent_transfer.h"
#include "io/mapped_backend.h"
#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "io/view_transfer.h"
#include "runtime/access_gather.h"
#include "runtime/collective_context.h"
#include "runtime/collective_error.h"
#include "runtime/collective_settings.h"
#include "runtime/converted_transfer.h"
#include "runtime/core/access.h"
#include "runtime/core/datatype_checks.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/flat_type_cache.h"
#include "runtime/core/memory_layout.h"
#include "runtime/core/realm_tiling.h"
#include "runtime/engine.h"
#include "runtime/lock_progress.h"
#include "runtime/trace.h"
#include "sync/atomic_mode.h"
#include "sync/lock_settings.h"
#include "sync/object_set.h"

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

// Nonblocking independent accesses of at most this many bytes are carried
// out at the call: a 4 KiB write to the page cache takes about a
// microsecond, less than handing it to a thread and waking the waiter
// (MPICH's MPI-IO does all its nonblocking file I/O at the call).
constexpr std::int64_t kAtTheCallBytes = 65536;

// Atomic mode's object set covers the views' common period when it holds
// at most this many pieces (about 14 MiB of objects, built in about 15 ms),
// else as much of the file as that many pieces cover; accesses beyond it
// take the lock as if they touched shared objects.
constexpr std::int64_t kAtomicModeObjectPieces = std::int64_t{1} << 18;

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

// A Future of `data`'s value that is ready once `protocol` is ready too;
// the exception of either, if any, is passed on (protocol's first).
Future<std::size_t> data_after_protocol(Future<std::size_t> protocol, Future<std::size_t> data) {
  struct Joint {
    std::mutex mutex;
    int pending = 2;
    std::exception_ptr protocol_failure, data_failure;
    std::size_t value = 0;
    Promise<std::size_t> promise;
  };
  auto joint = std::make_shared<Joint>();
  Future<std::size_t> result = joint->promise.get_future();
  auto settle = [joint](Future<std::size_t> done, bool is_data) {
    std::exception_ptr failure;
    std::size_t value = 0;
    try {
      value = done.get();
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(joint->mutex);
    (is_data ? joint->data_failure : joint->protocol_failure) = failure;
    if (is_data) joint->value = value;
    if (--joint->pending > 0) return;
    if (joint->protocol_failure || joint->data_failure) {
      joint->promise.set_exception(joint->protocol_failure ? joint->protocol_failure
                                                           : joint->data_failure);
    } else {
      joint->promise.set_value(joint->value);
    }
  };
  protocol.then([settle](Future<std::size_t> done) { settle(std::move(done), false); });
  data.then([settle](Future<std::size_t> done) { settle(std::move(done), true); });
  return result;
}

// Collective: whether `value` is the same on every process of `comm`
// (every process learns the answer). Also a barrier.
bool same_everywhere(MPI_Comm comm, std::int64_t value) {
  const std::int64_t mine[2] = {value, -value};
  std::int64_t least[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, least, 2, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  return least[0] == -least[1];
}

// What set_view learns from every process in its one reduction: whether
// the etype size is the same everywhere, and whether any process's new
// view has holes (its independent writes may then sieve: File::Impl::
// holes_in_some_view).
struct ViewAgreement {
  bool same_etype_size = true;
  bool holes_somewhere = false;
};

ViewAgreement agree_on_view(MPI_Comm comm, std::int64_t etype_size, bool holes) {
  const std::int64_t mine[3] = {etype_size, -etype_size, holes ? -1 : 0};
  std::int64_t least[3] = {0, 0, 0};
  check_mpi(MPI_Allreduce(mine, least, 3, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  return ViewAgreement{least[0] == -least[1], least[2] < 0};
}

void require_same(bool same, const std::string& what) {
  if (!same) {
    throw UsageError(ErrorCode::not_same,
                     what + " differs between processes (MPI requires the same on all)");
  }
}

// Parses the hints collective operations use, for both directions, so that
// a value flowio cannot use fails the call that gives it (open, set_view,
// set_hints) rather than a later data call. Throws UsageError(invalid_hint).
void check_hints(const Hints& hints, int ranks,
                 const core::RealmDescription* file_realms = nullptr) {
  runtime::CollectiveSettings::from_hints(hints, ranks, true, file_realms);
  runtime::CollectiveSettings::from_hints(hints, ranks, false, file_realms);
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

struct File::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path;
  Mode mode = Mode::rdonly;
  Hints hints;
  io::FileDescriptor fd;
  // Held by sieving writes of this file's collective operations and by
  // the independent writes that may meet them (guard_write).
  std::unique_ptr<io::SieveLock> sieve_lock;
  io::FileDescriptor direct_fd;  // O_DIRECT, with the hint flowio_direct_io
  // The mapping independent accesses store through (io/file_mapping.h);
  // declared after the descriptor so that it is unmapped first.
  std::unique_ptr<io::FileMapping> mapping;
  std::unique_ptr<io::StorageBackend> backend;
  // The layer of `backend` that serves small rewrites and re-reads through
  // `mapping` once attached (io/mapped_backend.h); owned by `backend`.
  io::MappedBackend* mapped_layer = nullptr;
  std::shared_ptr<runtime::Engine> engine;
  std::shared_ptr<const core::FileView> view = std::make_shared<core::FileView>();
  // The view's data representation (File::set_view).
  std::shared_ptr<const exchange::DataRepresentation> representation =
      exchange::find_representation("native");
  MPI_Offset pointer = 0;  // individual file pointer, in etypes
  int ranks = 1;
  // Made by the first collective data call (every process makes it then,
  // in the same order), so that opening a file costs one communicator
  // duplicate, not the context's own. Declared after the engine, backend
  // and descriptor it borrows, so it is destroyed before them.
  std::unique_ptr<runtime::CollectiveContext> collective;
  runtime::CollectiveContext& collective_context() {
    if (!collective) {
      collective =
          std::make_unique<runtime::CollectiveContext>(comm, fd, *sieve_lock, *backend, *engine);
      forget_plans();  // sets the plan cache's bound from the hints
    }
    return *collective;
  }

  // Atomic mode, while it is on: the lock (shared with the collective
  // operations that use it) and the port through which it waits. Declared
  // last: destroyed first.
  std::unique_ptr<runtime::LockProgress> lock_port;
  std::shared_ptr<sync::AtomicMode> atomic;

  // Operations started and not finished. Tasks refer to this Impl by
  // pointer; it is destroyed only once this count is zero.
  std::mutex mutex;
  std::condition_variable idle;
  std::size_t pending = 0;
  // Writes in progress here, for guard_write: collective writes started
  // and not finished, and independent writes running without the sieve
  // lock (guarded by `mutex`).
  std::size_t collective_writes = 0;
  std::size_t unlocked_writes = 0;
  std::condition_variable unlocked_writes_done;
  // Whether some process's current view has holes (agreed at set_view;
  // false at open, where every view is the default one). Then independent
  // writes may sieve: read their extent, fill in their pieces and write
  // it back, as ROMIO does. So that no one's bytes are lost between the
  // read and the write, every write of the file, by any process and any
  // method, holds the sieve lock over its extent meanwhile (guard_write,
  // io::WindowIoSettings::lock_every_write). With no holes anywhere, no
  // write has holes to sieve, and small calls take no lock.
  bool holes_in_some_view = false;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ~Impl() {
    wait_idle();
    // Not closed: nothing collective here (the lock's windows are left
    // to MPI_Finalize).
    atomic.reset();
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
  // The parsed settings are dropped only when a value changed: programs
  // such as HDF5 pass the same hints with every set_view.
  void merge_hints(const Hints& more) {
    bool changed = false;
    for (const auto& [key, value] : more) {
      if (key == "flowio_io_backend" || key == "flowio_direct_io") continue;
      auto [kept, inserted] = hints.try_emplace(key, value);
      if (!inserted && kept->second == value) continue;
      kept->second = value;
      changed = true;
    }
    if (changed) {
      settings_for.fill(nullptr);
      forget_plans();
    }
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
          runtime::CollectiveSettings::from_hints(hints, ranks, writing, file_realms.get()));
      settings->window_io.file_readable = fd.readable();
      settings->window_io.lock_every_write = holes_in_some_view;
      kept = std::move(settings);
    }
    return kept;
  }
  std::array<std::shared_ptr<const runtime::CollectiveSettings>, 2> settings_for;
  // Realms described by File::set_file_realms, or null.
  std::shared_ptr<const core::RealmDescription> file_realms;

  // Replaces the described realms (null: back to the hints' realms).
  void set_file_realms(std::shared_ptr<const core::RealmDescription> realms);

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

  // An aggregator sieving a window writes the window's holes back as it
  // read them, so a write of a hole's bytes in between would be lost. Its
  // bytes' writers are kept out by the sieve lock, which the aggregator
  // holds from its read to its write (in atomic mode too, where accesses
  // of private objects take no lease): an independent write takes it too
  // while a collective write is pending on its process (a process without
  // one is not inside any collective write: a collective write ends on
  // every process only after every aggregator has written). An
  // independent write that started before is waited for when a collective
  // write starts (begin_collective), as no aggregator reads a window
  // before every process has joined. While some process's view has holes
  // (holes_in_some_view), every independent write takes the lock over its
  // extent, whatever is pending, since independent writes may sieve too.
  class WriteGuard {
   public:
    WriteGuard() = default;
    WriteGuard(WriteGuard&& other) noexcept
        : unlocked_of_(std::exchange(other.unlocked_of_, nullptr)), held_(std::move(other.held_)) {}
    WriteGuard& operator=(WriteGuard&&) = delete;
    ~WriteGuard() {
      if (unlocked_of_ != nullptr) unlocked_of_->end_unlocked_write();
    }
    // Whether the write holds the sieve lock over its whole extent: then,
    // every other writer of the file keeping out of it, it may rewrite
    // the bytes between its pieces.
    bool holds_extent() const { return static_cast<bool>(held_); }

   private:
    friend struct Impl;
    Impl* unlocked_of_ = nullptr;  // counted as an unlocked write of this file
    io::SieveLock::Held held_;
  };
  // Held around an independent write, on the thread that writes, once
  // any atomic-mode lease is held (so that it never waits for other
  // processes' messages). Defined after Transfer.
  struct Transfer;
  WriteGuard guard_write(const Transfer& transfer);
  void end_unlocked_write() {
    std::lock_guard lock(mutex);
    if (--unlocked_writes == 0) unlocked_writes_done.notify_all();
  }
  // A collective call begins: counted as an operation (begin_operation),
  // and a write as a pending collective write, once the independent writes
  // that started unlocked are done.
  void begin_collective(bool writes) {
    std::unique_lock lock(mutex);
    ++pending;
    if (!writes) return;
    ++collective_writes;
    unlocked_writes_done.wait(lock, [this] { return unlocked_writes == 0; });
  }
  // Undoes begin_collective; the last touch of this Impl, as end_operation().
  void end_collective(bool writes) {
    std::lock_guard lock(mutex);
    if (writes) --collective_writes;
    if (--pending == 0) idle.notify_all();
  }

  // A data access checked and flattened at the call.
  struct Transfer {
    std::shared_ptr<const core::FlatType> memory_type;
    core::MemoryLayout memory;
    std::int64_t stream_position = 0;  // in the view's stream, in bytes
    std::int64_t stream_bytes = 0;     // of the view's stream: file bytes
    // Present when the view's representation is not native.
    std::shared_ptr<exchange::StreamConversion> conversion;
  };
  // Checks the arguments of a data access (UsageError when bad). With
  // `advance_pointer`, the individual file pointer moves past the data at
  // once, as MPI says it does at the call.
  Transfer prepare_transfer(bool writing, MPI_Offset offset, const void* buffer, MPI_Count count,
                            MPI_Datatype datatype, bool advance_pointer);

  // Collective: turns atomic mode on (building the lock the hints choose)
  // or off (freeing it).
  void set_atomicity(bool on);
  // Collective, in atomic mode: tells it the objects of every process's
  // current view, so that accesses of private objects take no lock. Run
  // when atomic mode is turned on and at every set_view while it is on (a
  // set describes the views it was built from).
  void describe_views_to_atomic_mode();

  // Reads or writes `count` copies of `datatype` at view offset `offset`
  // (in etypes) on the calling thread, and returns the bytes moved. With
  // `advance_pointer`, the individual file pointer moves past the data at
  // once, as MPI says it does at the call.
  std::size_t run_transfer(bool writing, MPI_Offset offset, const void* buffer, MPI_Count count,
                           MPI_Datatype datatype, bool advance_pointer = false);
  // The same, started: at the call when it is small (kAtTheCallBytes),
  // else on the engine's I/O thread.
  Future<std::size_t> start_transfer(bool writing, MPI_Offset offset, const void* buffer,
                                     MPI_Count count, MPI_Datatype datatype,
                                     bool advance_pointer = false);
  // The transfer itself, on whichever thread: through a converting
  // staging buffer when the representation is not native, else by the
  // independent methods (io/independent_transfer.h). Returns the memory
  // bytes moved.
  // `may_rewrite_extent`: atomic mode's word that no one else writes the
  // bytes between the pieces meanwhile (io/independent_transfer.h).
  std::int64_t transfer(bool writing, const Transfer& transfer, const core::FileView& on_view,
                        bool may_rewrite_extent = false);
  // The stream bytes a transfer covers in the current view.
  core::Access access_of(const Transfer& transfer) const {
    return core::Access(view, transfer.stream_position,
                        transfer.stream_position + transfer.stream_bytes);
  }
  // Starts a collective operation (runtime/collective_context.h).
  Future<std::size_t> start_request(runtime::CollectiveRequest request);
  // Takes this process's part in a collective call whose arguments it
  // refused (File::refuse_collective).
  void refuse_collective(bool writing, ErrorCode code, bool blocking);
  // The request of a collective read or write. Bad arguments throw, after
  // this process has taken its part in the call without data.
  runtime::CollectiveRequest collective_request(bool writing, MPI_Offset offset, const void* buffer,
                                                MPI_Count count, MPI_Datatype datatype,
                                                bool advance_pointer, bool blocking);
  // Reads or writes as a collective operation: start_ returns its future,
  // run_ (the blocking forms) waits and returns what it moved.
  Future<std::size_t> start_collective(bool writing, MPI_Offset offset, const void* buffer,
                                       MPI_Count count, MPI_Datatype datatype,
                                       bool advance_pointer = false);
  std::size_t run_collective(bool writing, MPI_Offset offset, const void* buffer, MPI_Count count,
                             MPI_Datatype datatype, bool advance_pointer = false);
  // A collective read through a view whose pieces overlap (read-only files
  // only): two-phase I/O needs each process's stream in file order, so this
  // process reads its data independently and takes part in the collective
  // protocol without data. Reads do not conflict with one another, and no
  // process writes a read-only file.
  Future<std::size_t> read_overlapping_view(MPI_Offset offset, void* buffer, MPI_Count count,
                                            MPI_Datatype datatype, bool advance_pointer,
                                            bool blocking);
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

  // One allreduce tells whether any process passed an invalid mode, and
  // whether every process passed the same one.
  std::exception_ptr bad_mode;
  try {
    validate_mode(mode);
  } catch (const UsageError&) {
    bad_mode = std::current_exception();
  }
  const auto mode_bits = static_cast<std::int64_t>(mode);
  const std::int64_t mine[3] = {bad_mode ? -1 : 0, mode_bits, -mode_bits};
  std::int64_t least[3] = {0, 0, 0};
  check_mpi(MPI_Allreduce(mine, least, 3, MPI_INT64_T, MPI_MIN, impl->comm), "MPI_Allreduce");
  if (bad_mode) std::rethrow_exception(bad_mode);
  if (least[0] < 0) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "open: another process passed an invalid access mode");
  }
  require_same(least[1] == -least[2], "open: the access mode");
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
  if (has(mode, Mode::append)) impl->pointer = impl->fd.size();
  if (direct_io) impl->open_direct();
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
  runtime::run_collectively(closing->comm, "close", [&] { closing->fd.close(); });
  // Removed once every process has closed it (the step above), as some
  // file systems do not let an open file go.
  if (has(closing->mode, Mode::delete_on_close)) {
    runtime::run_collectively(closing->comm, "close", [&] {
      if (closing->rank == 0 && ::unlink(closing->path.c_str()) != 0) {
        throw_errno(errno, "close: unlink " + closing->path);
      }
    });
  }
}

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

void File::set_atomicity(bool atomic) { impl().set_atomicity(atomic); }

bool File::atomicity() const { return impl().atomic != nullptr; }

void File::set_view(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype,
                    const Hints& hints, const std::string& representation) {
  Impl& file = impl();
  file.wait_idle();
  std::shared_ptr<const core::FileView> view;
  std::shared_ptr<const exchange::DataRepresentation> chosen;
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
  });
  // MPI requires the same etype extent everywhere (MPI 4.0, 14.3); only
  // valid views get this far, so every process takes part, and every one
  // learns the same answer.
  const ViewAgreement agreed = agree_on_view(
      file.comm, view->etype_size(), !view->is_contiguous() && !has(file.mode, Mode::rdonly));
  require_same(agreed.same_etype_size, "set_view: the etype size");
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
}

void File::set_hints(const Hints& hints) {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "set_hints", [&] {
    Hints merged = file.hints;
    for (const auto& [key, value] : hints) merged[key] = value;
    check_hints(merged, file.ranks, file.file_realms.get());
  });
  file.merge_hints(hints);
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
  transfer.stream_position = offset * view->etype_size();
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
  auto task = [this, writing, prepared = std::move(prepared), promise, view = view, lease,
               atomic_mode = atomic, atomic_access]() {
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
    end_operation();
  };
  if (!atomic) {
    engine->io().post(std::move(task));
    return future;
  }
  // The task runs once the lease is held; nobody waits for it meanwhile.
  atomic->lock_access(*atomic_access, writing)
      .then([this, lease, promise, task = std::move(task)](Future<sync::Lease> held) {
        try {
          *lease = held.get();
        } catch (...) {
          promise->set_exception(std::current_exception());
          end_operation();
          return;
        }
        engine->io().post(task);
      });
  return future;
}

runtime::CollectiveRequest File::Impl::collective_request(bool writing, MPI_Offset offset,
                                                          const void* buffer, MPI_Count count,
                                                          MPI_Datatype datatype,
                                                          bool advance_pointer, bool blocking) {
  runtime::CollectiveRequest request;
  request.blocking = blocking;
  request.settings = collective_settings(writing);
  request.writing = writing;
  try {
    Transfer transfer = prepare_transfer(writing, offset, buffer, count, datatype, advance_pointer);
    request.access = core::Access(view, transfer.stream_position,
                                  transfer.stream_position + transfer.stream_bytes);
    request.memory_type = std::move(transfer.memory_type);
    request.memory = transfer.memory;
    request.conversion = std::move(transfer.conversion);
  } catch (const UsageError& error) {
    // Bad arguments fail this call at once, but the other processes are
    // in the collective call already: this process still takes part.
    const std::exception_ptr refusal = std::current_exception();
    refuse_collective(writing, error.code(), blocking);
    std::rethrow_exception(refusal);
  }
  request.atomic = atomic;
  return request;
}

Future<std::size_t> File::Impl::start_collective(bool writing, MPI_Offset offset,
                                                 const void* buffer, MPI_Count count,
                                                 MPI_Datatype datatype, bool advance_pointer) {
  if (!writing && view->overlaps()) {
    return read_overlapping_view(offset, const_cast<void*>(buffer), count, datatype,
                                 advance_pointer, false);
  }
  return start_request(
      collective_request(writing, offset, buffer, count, datatype, advance_pointer, false));
}

std::size_t File::Impl::run_collective(bool writing, MPI_Offset offset, const void* buffer,
                                       MPI_Count count, MPI_Datatype datatype,
                                       bool advance_pointer) {
  if (!writing && view->overlaps()) {
    return read_overlapping_view(offset, const_cast<void*>(buffer), count, datatype,
                                 advance_pointer, true)
        .get();
  }
  runtime::CollectiveRequest request =
      collective_request(writing, offset, buffer, count, datatype, advance_pointer, true);
  // As start_request(): a write keeps this process's independent writes
  // under the sieve lock while it is pending.
  const bool writes = request.writing && request.refused == 0;
  begin_collective(writes);
  std::exception_ptr failure;
  std::size_t moved = 0;
  try {
    moved = runtime::run_collective(
        collective_context(), std::move(request), [this, writes] { end_collective(writes); },
        failure);
  } catch (...) {
    end_collective(writes);
    throw;
  }
  if (failure) std::rethrow_exception(failure);
  return moved;
}

Future<std::size_t> File::Impl::start_request(runtime::CollectiveRequest request) {
  const bool writes = request.writing && request.refused == 0;
  begin_collective(writes);
  try {
    return runtime::start_collective(collective_context(), std::move(request),
                                     [this, writes] { end_collective(writes); });
  } catch (...) {
    end_collective(writes);
    throw;
  }
}

void File::Impl::refuse_collective(bool writing, ErrorCode code, bool blocking) {
  runtime::CollectiveRequest request;
  request.blocking = blocking;
  request.settings = collective_settings(writing);
  request.writing = writing;
  request.refused = static_cast<int>(code) + 1;
  request.memory_type = std::make_shared<const core::FlatType>();
  request.memory = core::MemoryLayout{request.memory_type.get(), 0, 0};
  // Its outcome is the refusal, which the caller reports; every process
  // learns of it from the gather.
  start_request(std::move(request));
}

void File::refuse_collective(bool writing, ErrorCode code) {
  impl().refuse_collective(writing, code, false);
}

Future<std::size_t> File::Impl::read_overlapping_view(MPI_Offset offset, void* buffer,
                                                      MPI_Count count, MPI_Datatype datatype,
                                                      bool advance_pointer, bool blocking) {
  Future<std::size_t> data =
      start_transfer(false, offset, buffer, count, datatype, advance_pointer);
  runtime::CollectiveRequest request;
  request.blocking = blocking;
  request.settings = collective_settings(false);
  request.writing = false;
  request.memory_type = std::make_shared<const core::FlatType>();
  request.memory = core::MemoryLayout{request.memory_type.get(), 0, 0};
  return data_after_protocol(start_request(std::move(request)), std::move(data));
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
  return impl().run_collective(true, offset, buffer, count, datatype);
}

std::size_t File::read_at_all(MPI_Offset offset, void* buffer, MPI_Count count,
                              MPI_Datatype datatype) {
  return impl().run_collective(false, offset, buffer, count, datatype);
}

std::size_t File::write_all(const void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.run_collective(true, file.pointer, buffer, count, datatype, true);
}

std::size_t File::read_all(void* buffer, MPI_Count count, MPI_Datatype datatype) {
  Impl& file = impl();
  return file.run_collective(false, file.pointer, buffer, count, datatype, true);
}

std::vector<OperationStatistics> File::statistics() const {
  const Impl& file = impl();
  return file.collective ? file.collective->statistics() : std::vector<OperationStatistics>{};
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

MPI_Offset File::byte_offset(MPI_Offset offset) const {
  const Impl& file = impl();
  if (offset < 0) throw UsageError(ErrorCode::invalid_argument, "byte_offset: negative offset");
  return file.view->file_offset_of(offset * file.view->etype_size());
}

void File::sync() {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "sync", [&] { file.fd.sync(); });
  // Another handle's size change becomes visible here (sync, barrier,
  // sync): what this process knew of the size may no longer hold.
  file.mapping->forget_size();
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
// The arguments are agreed on first, so that a bad one on any process
// fails the call everywhere and changes nothing; the size must be the same
// on every process (MPI 4.0, 14.2.6).
void File::set_size(MPI_Offset bytes) {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "set_size",
                            [&] { check_size_argument(bytes, file.mode, "set_size"); });
  require_same(same_everywhere(file.comm, bytes), "set_size: the size");
  file.mapping->forget();
  runtime::run_collectively(file.comm, "set_size", [&] {
    if (file.rank == 0) file.fd.truncate(bytes);
  });
  file.forget_plans();
}

void File::preallocate(MPI_Offset bytes) {
  Impl& file = impl();
  file.wait_idle();
  runtime::run_collectively(file.comm, "preallocate",
                            [&] { check_size_argument(bytes, file.mode, "preallocate"); });
  require_same(same_everywhere(file.comm, bytes), "preallocate: the size");
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
      "flowio_compress",     "flowio_compress_min_bytes",
      "flowio_direct_io",    "flowio_direct_threshold",
      "flowio_durable",      "flowio_plan_cache",
      "flowio_ds_mapping",   "flowio_ds_threshold",
      "flowio_exchange",     "flowio_io_backend",
      "flowio_lock",         "flowio_lock_ranges",
      "flowio_mapped_io",    "flowio_realm_policy",
      "flowio_realm_stripe", "ind_rd_buffer_size",
      "ind_wr_buffer_size",  "romio_cb_fr_type",
      "romio_no_indep_rw",   "romio_cb_fr_alignment",
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
  const auto writes =
      runtime::CollectiveSettings::from_hints(file.hints, file.ranks, true, file.file_realms.get());
  const auto reads = runtime::CollectiveSettings::from_hints(file.hints, file.ranks, false,
                                                             file.file_realms.get());
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
  in_force["flowio_compress"] = exchange::to_string(writes.compression.mode);
  in_force["flowio_compress_min_bytes"] = std::to_string(writes.compression.min_bytes);
  in_force["romio_cb_write"] = buffering(writes.buffering);
  in_force["romio_cb_read"] = buffering(reads.buffering);
  in_force["romio_ds_write"] = sieving(writes.window_io.sieve);
  in_force["romio_ds_read"] = sieving(reads.window_io.sieve);
  in_force["flowio_ds_threshold"] = std::to_string(writes.window_io.sieve_threshold);
  in_force["flowio_ds_mapping"] = sieving(writes.window_io.mapping);
  in_force["flowio_direct_threshold"] = std::to_string(writes.direct_threshold);
  in_force["flowio_durable"] = writes.durable ? "enable" : "disable";
  in_force["flowio_plan_cache"] = std::to_string(writes.plans_kept);
  in_force["ind_wr_buffer_size"] = std::to_string(writes.window_io.independent_batch_bytes);
  in_force["ind_rd_buffer_size"] = std::to_string(reads.window_io.independent_batch_bytes);
  in_force["romio_no_indep_rw"] = writes.no_independent_accesses ? "true" : "false";
  in_force.try_emplace("flowio_direct_io", "disable");
  // The lock atomic mode uses (or would use, if turned on now).
  (file.atomic ? file.atomic->settings() : sync::LockSettings::from_hints(file.hints))
      .describe(in_force);
  return in_force;
}
Mode File::mode() const { return impl().mode; }
MPI_Comm File::communicator() const { return impl().comm; }
const std::string& File::path() const { return impl().path; }

}  // namespace flowio
