// File::Impl, the state behind a flowio::File, and the two checks its
// calls share. Private to api/: the File member functions are defined in
// the api/file_*.cc files named after what they do (open and close,
// independent and collective transfers, view and realms, atomicity,
// hints, size, position, the shared file pointer).
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "api/shared_pointer.h"
#include "api/write_behind.h"
#include "exchange/data_representation.h"
#include "exchange/stream_conversion.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "io/file_descriptor.h"
#include "io/file_mapping.h"
#include "io/mapped_backend.h"
#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "runtime/core/flat_type.h"
#include "runtime/core/memory_layout.h"
#include "runtime/core/realm_tiling.h"
#include "runtime/engine/collective_context.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/lock_progress.h"
#include "runtime/plan/collective_settings.h"
#include "sync/atomic_mode.h"

namespace flowio {

// Throws UsageError(not_same) unless `same`: for what MPI requires to be
// the same on every process, once every process has learned `same`.
inline void require_same(bool same, const std::string& what) {
  if (!same) {
    throw UsageError(ErrorCode::not_same,
                     what + " differs between processes (MPI requires the same on all)");
  }
}

// Parses the hints collective operations use, for both directions, so that
// a value flowio cannot use fails the call that gives it (open, set_view,
// set_hints) rather than a later data call. Throws UsageError(invalid_hint).
inline void check_hints(const Hints& hints, int ranks,
                        const core::RealmDescription* file_realms = nullptr) {
  runtime::CollectiveSettings::from_hints(hints, ranks, true, file_realms);
  runtime::CollectiveSettings::from_hints(hints, ranks, false, file_realms);
  write_behind_budget(hints);
}

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
  // The shared file pointer (File::*_shared, *_ordered), made at open.
  std::unique_ptr<SharedPointer> shared;
  int ranks = 1;
  // Made by the first collective data call (every process makes it then,
  // in the same order), so that opening a file costs one communicator
  // duplicate, not the context's own. Declared after the engine, backend
  // and descriptor it borrows, so it is destroyed before them.
  std::unique_ptr<runtime::CollectiveContext> collective;
  // Blocking collective writes that return once their data is copied
  // (hint flowio_write_behind). Mutable: File::size() waits for them.
  mutable WriteBehind write_behind;
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
    // Not closed: nothing collective here (the lock's windows and the
    // shared pointer's are left to MPI_Finalize).
    if (shared) shared->abandon();
    atomic.reset();
    collective.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }

  // Waits for every operation started, writes behind included (whose
  // failure is then kept for report_write_behind_failure()).
  void wait_idle() {
    write_behind.drain();
    std::unique_lock lock(mutex);
    idle.wait(lock, [this] { return pending == 0; });
  }

  // Throws the failure of a write behind that ended since the last report
  // (WriteBehind::take_failure). Called only where every process knows of
  // the same failures, so that every process throws at the same call and
  // none goes on alone into calls the others left: after the collective
  // calls that wait for every write behind (sync, close, set_view, ...),
  // and at a write behind's call when every process knows of one.
  void report_write_behind_failure() {
    if (std::exception_ptr failure = write_behind.take_failure()) std::rethrow_exception(failure);
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
      write_behind.set_budget(write_behind_budget(hints));
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

  // Before an independent access of `transfer` by this process: the
  // writes behind that may touch its bytes end, and a failure of one is
  // reported (report_write_behind_failure).
  void before_independent_access(const Transfer& transfer);

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
  // Starts a collective operation (runtime/engine/collective_context.h).
  Future<std::size_t> start_request(runtime::CollectiveRequest request);
  // Takes this process's part in a collective call whose arguments it
  // refused (also the MPI-IO layer's, LayerHooks::refuse_collective).
  void refuse_collective(bool writing, ErrorCode code, bool blocking);
  // In a handler of the UsageError of bad arguments to a collective call:
  // takes this process's part as a refusal, then rethrows the error.
  [[noreturn]] void refuse_and_rethrow(bool writing, ErrorCode code, bool blocking);
  // A collective call's request with the direction, the blocking flag and
  // the settings filled in, nothing else.
  runtime::CollectiveRequest bare_request(bool writing, bool blocking);
  // This process's part in a collective call, without data: for a refusal,
  // or a failure before the call reached the runtime.
  runtime::CollectiveRequest request_without_data(bool writing, bool blocking);
  // This process's part without data, failed (the current exception) while
  // its call was described.
  runtime::CollectiveRequest failed_request(bool writing, bool blocking);
  // The request of a collective read or write of `transfer` (checked).
  runtime::CollectiveRequest request_of(bool writing, Transfer&& transfer, bool blocking);
  // The request of a collective read or write. Bad arguments throw, after
  // this process has taken its part in the call without data; any other
  // failure to describe the part is this request's failed_before, which
  // the operation's agreement reports on every process.
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
  // Runs a collective call's request (blocking) and returns what it moved.
  std::size_t run_request(runtime::CollectiveRequest request);
  // A blocking collective write behind (write_behind): once every process
  // has found its arguments good (else the call fails on every process,
  // and nothing starts), started on a copy of its data, or, with the hint
  // flowio_durable, on `buffer` itself, returning once this process's
  // data phase is over (its sync and agreement go on behind); returns the
  // bytes it will write. Runs as run_collective() does when its data does
  // not fit the budget or is converted to another representation.
  std::size_t write_collective_behind(MPI_Offset offset, const void* buffer, MPI_Count count,
                                      MPI_Datatype datatype, bool advance_pointer);

  // Where a shared-pointer call's data go, in etypes, with the arguments
  // checked first (UsageError, the pointer unmoved): claimed atomically by
  // an independent call, agreed in rank order by an ordered one.
  MPI_Offset claim_shared(bool writing, const void* buffer, MPI_Count count, MPI_Datatype datatype);
  MPI_Offset claim_ordered(bool writing, const void* buffer, MPI_Count count,
                           MPI_Datatype datatype);
};

}  // namespace flowio
