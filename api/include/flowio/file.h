// flowio::File: a file opened by a group of MPI processes, read and written
// through file views as in MPI-IO, with every data call available as a
// nonblocking form that returns a Future at once.
//
//   flowio::File file = flowio::File::open(MPI_COMM_WORLD, "out.dat",
//                                          flowio::Mode::create | flowio::Mode::wronly);
//   file.set_view(rank * 8, MPI_DOUBLE, filetype);
//   flowio::Future<std::size_t> done = file.iwrite_at(0, data, n, MPI_DOUBLE);
//   compute();          // the write proceeds meanwhile
//   done.get();         // rethrows an I/O error, if any
//   file.close();
//
// Threads: a File may be used from one thread at a time (like an MPI file
// handle); the Futures it returns may be waited on from any thread.
// Collective calls (open, close, set_view, sync, set_size, preallocate,
// seek_shared and the *_all and *_ordered data calls) must be made by every
// process of the communicator, in the same order.
//
// Buffers: every nonblocking data call (each i-form, independent,
// collective, shared or ordered) borrows its buffer until the returned
// Future is ready, whether it succeeds or fails: the caller must neither
// free nor reuse it (nor, for a write, change it) before then. A failed
// call's Future is ready only once nothing uses the buffer any more; wait
// for it (when_all.h waits for many) before letting the buffer go. The
// blocking forms borrow it for the call.
//
// Every data call also has a typed form that takes a std::span, std::vector
// or std::array of arithmetic elements in place of (buffer, count,
// datatype), deduces the datatype (datatype.h) and returns a Transfer
// (transfer.h: bytes, element counts, an MPI_Status) in place of the bytes;
// they are listed at the end of the class.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <ranges>
#include <string>
#include <type_traits>
#include <vector>

#include "flowio/datatype.h"
#include "flowio/error.h"
#include "flowio/executor.h"
#include "flowio/future.h"
#include "flowio/hints.h"
#include "flowio/statistics.h"
#include "flowio/transfer.h"

namespace flowio {

// Access modes, combined with |: exactly one of rdonly, wronly, rdwr, plus
// any of the others, as MPI_MODE_* defines them.
enum class Mode : unsigned {
  rdonly = 1u << 0,
  wronly = 1u << 1,
  rdwr = 1u << 2,
  create = 1u << 3,
  excl = 1u << 4,             // with create: fail if the file exists
  append = 1u << 5,           // file pointers start at end of file
  delete_on_close = 1u << 6,  // the file is removed at close
};

constexpr Mode operator|(Mode a, Mode b) {
  return static_cast<Mode>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool has(Mode set, Mode flag) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(flag)) != 0;
}

// Where seek() counts from.
enum class Whence { set, current, end };

// One aggregator's file realm (File::set_file_realms): copies of `type`
// at displacement + k * extent(type), like a view's filetype.
struct FileRealm {
  MPI_Offset displacement = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

class File {
 public:
  // Collective over `comm`: opens (or creates) `path` on every process.
  // Throws UsageError for a bad mode and IoError when the file cannot be
  // opened on any process (then it throws on every process). Requires MPI
  // initialized with MPI_THREAD_MULTIPLE. `hints` apply over the system
  // hints file's (FLOWIO_HINTS, else ROMIO_HINTS, else /etc/romio-hints;
  // see hints.h): a key in `hints` keeps its value here.
  static File open(MPI_Comm comm, const std::string& path, Mode mode, const Hints& hints = {});

  File() noexcept;
  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  // A file still open is closed locally (its operations waited for, no
  // collective step); call close() to close it properly.
  ~File();

  bool is_open() const noexcept;

  // Collective. Waits for this process's outstanding operations, closes,
  // and removes the file if it was opened with delete_on_close.
  void close();

  // Collective. Sets the view: `displacement` bytes from the file's start,
  // then `filetype` tiled without end; offsets count `etype`s. Resets the
  // file pointer to 0. Throws UsageError on every process when the view is
  // invalid on any (see MPI 4.1, 14.3): its pieces must never decrease,
  // and on a file open for writing never overlap. `representation` names
  // the data representation (flowio/data_representation.h); in one other
  // than native the view is laid out in the file's sizes and data is
  // converted on its way. Throws UsageError(unsupported_representation) for
  // an unknown name.
  void set_view(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype,
                const Hints& hints = {}, const std::string& representation = "native");
  // The view's data representation ("native" until set_view says otherwise).
  const std::string& representation() const;
  // The extent `datatype` has in the file under the view's representation
  // (MPI_File_get_type_extent): its memory extent when native.
  MPI_Count type_extent(MPI_Datatype datatype) const;

  // Independent, nonblocking data access. `buffer` holds `count` copies of
  // `datatype` and is borrowed until the returned Future is ready. The
  // Future's value is the number of bytes transferred: for reads, less than
  // asked when the file ends. Offsets count etypes of the view. The forms
  // without an offset use and advance the individual file pointer (at the
  // call, by the amount asked). Bad arguments throw UsageError at the call;
  // I/O failures arrive through the Future.
  Future<std::size_t> iwrite_at(MPI_Offset offset, const void* buffer, MPI_Count count,
                                MPI_Datatype datatype);
  Future<std::size_t> iread_at(MPI_Offset offset, void* buffer, MPI_Count count,
                               MPI_Datatype datatype);
  Future<std::size_t> iwrite(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  Future<std::size_t> iread(void* buffer, MPI_Count count, MPI_Datatype datatype);

  //
  // A nonblocking access of at most 64 KiB is carried out at the call (its
  // Future is ready when the call returns): handing it to a thread would
  // cost more than the access. Larger ones run on flowio's I/O thread.
  // Noncontiguous accesses are served per batch of pieces by one request,
  // stores through a shared mapping of the file, data sieving (reads) or
  // one request per piece (see README, "Independent I/O"); a write never
  // changes bytes outside its pieces.

  // Blocking forms: the same result as the nonblocking call plus get(),
  // carried out on the calling thread.
  std::size_t write_at(MPI_Offset offset, const void* buffer, MPI_Count count,
                       MPI_Datatype datatype);
  std::size_t read_at(MPI_Offset offset, void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t write(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t read(void* buffer, MPI_Count count, MPI_Datatype datatype);

  // Collective data access (two-phase I/O): every process of the file's
  // communicator calls, in the same order, each with its own buffer, count
  // (0 is fine) and view. A few processes (the aggregators, hint cb_nodes)
  // gather the data of a region of the file each (its file realm) and write
  // or read it in buffer-sized iterations, pipelined: packing, the exchange
  // between processes and the file I/O of consecutive iterations overlap.
  // The call returns at once; `buffer` is borrowed until the returned
  // Future is ready (any process may be packing from it or unpacking into
  // it until then). The Future's value is this process's bytes
  // transferred (for reads, the prefix of its data before end of file; its
  // memory past end of file is left untouched). An I/O error on any process
  // reaches every process's Future as the same kind of exception.
  // Several collective operations may be outstanding on one file; their
  // data phases run in call order. The forms without an offset use and
  // advance the individual file pointer at the call.
  Future<std::size_t> iwrite_at_all(MPI_Offset offset, const void* buffer, MPI_Count count,
                                    MPI_Datatype datatype);
  Future<std::size_t> iread_at_all(MPI_Offset offset, void* buffer, MPI_Count count,
                                   MPI_Datatype datatype);
  Future<std::size_t> iwrite_all(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  Future<std::size_t> iread_all(void* buffer, MPI_Count count, MPI_Datatype datatype);
  // Blocking forms: the same result as the nonblocking call plus get();
  // the work may be done on the calling thread.
  std::size_t write_at_all(MPI_Offset offset, const void* buffer, MPI_Count count,
                           MPI_Datatype datatype);
  std::size_t read_at_all(MPI_Offset offset, void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t write_all(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t read_all(void* buffer, MPI_Count count, MPI_Datatype datatype);

  // The shared file pointer (MPI 4.1, 14.4.4): one position, in etypes of
  // the view, for every process of the file: 0 at open (the end of the
  // file with Mode::append) and after set_view. It is held by rank 0 and
  // moved with one-sided atomics, so independent calls need nothing from
  // the other processes. The data must be a whole number of etypes
  // (UsageError(invalid_datatype) otherwise, before the pointer moves).
  //
  // Independent: each call claims [pointer, pointer + its etypes) at the
  // call, atomically, then is iwrite_at / iread_at there (same result,
  // same buffer rule); concurrent calls of several processes take
  // consecutive places in the order of their claims.
  Future<std::size_t> iwrite_shared(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  Future<std::size_t> iread_shared(void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t write_shared(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t read_shared(void* buffer, MPI_Count count, MPI_Datatype datatype);
  // Collective, ordered: every process calls; their data follow each other
  // from the pointer in rank order, and the pointer moves past all of
  // them. The places are agreed at the call (a collective step: it returns
  // once every process has called; bad arguments on any process fail it on
  // every process), then it is iwrite_at_all / iread_at_all there.
  Future<std::size_t> iwrite_ordered(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  Future<std::size_t> iread_ordered(void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t write_ordered(const void* buffer, MPI_Count count, MPI_Datatype datatype);
  std::size_t read_ordered(void* buffer, MPI_Count count, MPI_Datatype datatype);
  // Collective. Moves the shared file pointer, as seek() the individual
  // one; every process passes the same offset and whence (UsageError on
  // every process otherwise, or when the position would be negative).
  void seek_shared(MPI_Offset offset, Whence whence);
  // The shared file pointer, in etypes: read from rank 0's memory, so
  // another process's claim may have moved it by the time this returns.
  MPI_Offset position_shared() const;

  // Statistics of this process's completed collective operations on this
  // file, oldest first (the most recent 1024 are kept). Waits for the
  // writes behind (hint flowio_write_behind) first, so that every
  // blocking call made so far is in it.
  std::vector<OperationStatistics> statistics() const;

  // The individual file pointer, in etypes of the view.
  void seek(MPI_Offset offset, Whence whence);
  MPI_Offset position() const;
  // The view position (in etypes) at which the file currently ends: where
  // seek(0, Whence::end) would move the pointer.
  MPI_Offset position_of_end() const;
  // File offset in bytes of view position `offset` (in etypes).
  MPI_Offset byte_offset(MPI_Offset offset) const;

  // Collective. Waits for this process's outstanding operations and makes
  // every byte written by any process durable on storage.
  void sync();
  // Current file size in bytes.
  MPI_Offset size() const;
  // Collective. Truncates or extends the file to `bytes`.
  void set_size(MPI_Offset bytes);
  // Collective. Makes sure storage is allocated for the first `bytes`
  // bytes; never shrinks the file.
  void preallocate(MPI_Offset bytes);

  // Collective. Atomic mode (MPI 4.0, 14.6.1) on or off: every process
  // passes the same flag (UsageError on every process otherwise). In
  // atomic mode each data access, independent or collective, is
  // indivisible with respect to the others that conflict with it (a write
  // against any access overlapping it): a read sees all or none of each
  // concurrent write, and a write is visible to every process's reads as
  // soon as it completes. flowio makes this with locks of its own over MPI
  // (no file-system locks): by default byte-range locks over the bytes
  // each access spans, so disjoint accesses still run in parallel; the
  // hints flowio_lock and flowio_lock_ranges choose another lock (hints.h).
  // Collective calls stay collective (two-phase I/O under one lease over
  // the whole operation). Waits for this process's outstanding operations;
  // the lock is built when atomic mode is turned on (hints read then) and
  // freed when it is turned off or the file closed. Off at open.
  void set_atomicity(bool atomic);
  bool atomicity() const;

  // Collective. Replaces the values of the hints in `hints` for the
  // operations started after the call (storage hints, flowio_io_backend and
  // flowio_direct_io, apply at open only and are ignored here).
  void set_hints(const Hints& hints);

  // Collective. File realms described by datatypes (the seed paper's
  // realm datatypes, ROMIO's romio_cb_fr_type): which bytes of the file
  // each aggregator of collective calls handles. `first` describes the
  // first aggregator's realm; aggregator a's is the same type moved by a
  // times its size, so a type that holds 1/n of each of its extents tiles
  // the file for n aggregators. For example
  // MPI_Type_create_resized(stripe bytes, 0, n * stripe) gives aggregator a
  // the stripes a, a + n, a + 2n, ... (hint flowio_realm_stripe says the
  // same without a type). `realms` gives each aggregator its own realm,
  // one per aggregator in the order of the hints cb_nodes and
  // flowio_aggregators. Each type's copies repeat from its displacement
  // in both directions (the displacement sets only their phase), and
  // the realms must partition the file: every byte in exactly one realm.
  // Realms are the same for every later collective call, whatever it
  // accesses, until close or clear_file_realms(); they take the place of
  // the realm hints (flowio_realm_policy reports "datatype"). Types are
  // read at the call and may be freed after it. Waits for this process's
  // outstanding operations. Throws UsageError on every process when the
  // realms are invalid on any (a type without data or whose copies
  // overlap: invalid_datatype; realms that overlap, leave a byte to no
  // aggregator, repeat only after more than 2^40 bytes or hold more than
  // 2^20 pieces per repetition, or a list whose length is not the
  // aggregator count: invalid_argument) or differ between processes
  // (not_same). A later set_hints that changes the aggregator count so
  // that the realms no longer fit fails as well.
  void set_file_realms(const FileRealm& first);
  void set_file_realms(const std::vector<FileRealm>& realms);
  // Collective. Back to the realms the hints choose.
  void clear_file_realms();

  // The hints in force (including defaults; flowio_ds_threshold shows the
  // write threshold; keys flowio does not know are left out), and the
  // access mode.
  Hints hints() const;
  Mode mode() const;
  // The file's private communicator (a duplicate of the one given to open).
  MPI_Comm communicator() const;
  const std::string& path() const;

  // Typed forms: each data call above, with `data` (a write's) or `buffer`
  // (a read's), one contiguous range of elements datatype.h lists, in place
  // of (buffer, count, datatype): its elements are the count, and their
  // datatype is deduced. They return a Transfer in place of the bytes. The
  // i-forms borrow the range's elements until the returned Future is
  // ready, and take only ranges that do not own them as temporaries
  // (BorrowableData: a std::span, or a named container):
  // `file.iwrite_at(0, std::vector<double>(n))`, whose vector would be gone
  // before the write, does not compile.
  //
  // FLOWIO_TYPED_FORMS(suffix [, MPI_Offset offset]) defines the four of
  // one family, here for _at: iwrite_at(offset, data),
  // iread_at(offset, buffer), write_at(offset, data), read_at(offset, buffer).
#define FLOWIO_TYPED_FORMS(SUFFIX, ...)                                                            \
  template <BorrowableData Data>                                                                   \
  Future<Transfer> iwrite##SUFFIX(__VA_ARGS__ __VA_OPT__(, ) Data&& data) {                        \
    return typed(data, [&](auto... raw) { return iwrite##SUFFIX(__VA_OPT__(offset, ) raw...); });  \
  }                                                                                                \
  template <TypedData Data>                                                                        \
  Transfer write##SUFFIX(__VA_ARGS__ __VA_OPT__(, ) const Data& data) {                            \
    return typed(data, [&](auto... raw) { return write##SUFFIX(__VA_OPT__(offset, ) raw...); });   \
  }                                                                                                \
  template <BorrowableBuffer Buffer>                                                               \
  Future<Transfer> iread##SUFFIX(__VA_ARGS__ __VA_OPT__(, ) Buffer&& buffer) {                     \
    return typed(buffer, [&](auto... raw) { return iread##SUFFIX(__VA_OPT__(offset, ) raw...); }); \
  }                                                                                                \
  template <TypedBuffer Buffer>                                                                    \
  Transfer read##SUFFIX(__VA_ARGS__ __VA_OPT__(, ) Buffer&& buffer) {                              \
    return typed(buffer, [&](auto... raw) { return read##SUFFIX(__VA_OPT__(offset, ) raw...); });  \
  }
  FLOWIO_TYPED_FORMS(_at, MPI_Offset offset)
  FLOWIO_TYPED_FORMS()
  FLOWIO_TYPED_FORMS(_at_all, MPI_Offset offset)
  FLOWIO_TYPED_FORMS(_all)
  FLOWIO_TYPED_FORMS(_shared)
  FLOWIO_TYPED_FORMS(_ordered)
#undef FLOWIO_TYPED_FORMS

 private:
  struct Impl;
  // The MPI-IO layer's hooks into a File (api/layer_hooks.h): not part of
  // the API.
  friend struct LayerHooks;
  explicit File(std::unique_ptr<Impl> impl) noexcept;
  Impl& impl() const;

  // A typed form's call: `call(buffer, count, datatype)` with the range's
  // elements, count and deduced datatype; its bytes become a Transfer of
  // that datatype (for a Future, on the thread that completes it: a short
  // step that never blocks).
  template <typename Range, typename Call>
  static auto typed(Range& range, Call call) {
    const MPI_Datatype datatype = datatype_of<std::ranges::range_value_t<Range>>();
    auto bytes =
        call(std::ranges::data(range), static_cast<MPI_Count>(std::ranges::size(range)), datatype);
    if constexpr (std::is_same_v<decltype(bytes), std::size_t>) {
      return Transfer(bytes, datatype);
    } else {
      return bytes.then(inline_executor(), [datatype](Future<std::size_t> moved) {
        return Transfer(moved.get(), datatype);
      });
    }
  }

  std::unique_ptr<Impl> impl_;
};

}  // namespace flowio
