// FileMapping: a shared mapping of part of one open file, kept from call
// to call, through which independent noncontiguous accesses store and load
// their pieces directly in the page cache.
//
// Why a mapping: a store through a shared mapping changes exactly the bytes
// stored. Data sieving by read-modify-write would write back the bytes
// between the pieces as they were when read, undoing what another process
// wrote there meanwhile; a store cannot. So independent writes of small
// pieces close together (an 8-byte region every 136 bytes) cost a copy of
// their data plus the page faults, instead of one system call per piece,
// and need no lock.
//
// Where it is safe: wherever every process writing the file sees one
// coherent copy of each page, which is the case on a local file system
// (one page cache per node: ext2/3/4, xfs, btrfs, tmpfs, f2fs, overlayfs
// over them), and which is what coherent_for_mapped_stores() checks.
// Not on NFS: its client writes back whole dirty pages of a mapping, so a
// store on one node can overwrite bytes another node wrote in the same
// page. Cluster file systems that keep mapped pages coherent through their
// lock managers (Lustre, GPFS) would qualify but are not enabled, as
// nothing here could test them. Elsewhere independent writes are sieved
// under the sieve lock where their pieces are close (io/sieve_lock.h,
// independent_transfer.h; on file systems with working fcntl locks), and
// otherwise go one request per piece.
//
// Kept mapping: mapping and unmapping cost system calls and a TLB
// shootdown, and a fresh mapping faults in every page again, so the last
// mapping is kept (until a call needs a range outside it, or forget()).
// Successive calls on the same part of the file (time steps, the repeated
// small accesses of HDF5) then cost their copies only.
//
// Errors: the range stored into is first given blocks with fallocate
// (which also extends the file to the end of the pieces, never shrinks
// it), so that a store never needs space the file system cannot give;
// where fallocate fails nothing is stored. A page that cannot be brought
// in (a device error, or the file truncated meanwhile by someone else)
// raises SIGBUS in the copy, which is caught (bus_guard.h) and thrown as
// IoError(io, EIO); some pieces may be stored by then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "io/storage_backend.h"
#include "io/window_piece.h"

namespace flowio::io {

// True when `fd` is a regular file on a file system where stores through
// shared mappings of several processes never lose each other's bytes (see
// above), and the descriptor allows a shared writable mapping: open for
// reading and writing, without O_DIRECT. Files opened write-only fail the
// second test: they need a read-write descriptor for this method.
bool coherent_for_mapped_stores(int fd);

// Thread safety: every method may be called from several threads at once
// (they take turns on a mutex). The descriptor is borrowed; forget() (or
// destruction) must happen before it is closed.
class FileMapping {
 public:
  explicit FileMapping(int fd) noexcept : fd_(fd) {}
  ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;

  // Stores every piece (sorted by offset, not overlapping) into the file
  // through the mapping, extending the file to the end of the last piece
  // if it is shorter. Returns false, having changed nothing, when the file
  // cannot be mapped for writing or fallocate refuses the range. Throws
  // IoError(EIO) when a page cannot be brought in.
  bool store(std::span<const WindowPiece> pieces);

  // Copies every piece before end of file out of the mapping and leaves
  // the memory of bytes past end of file untouched. Returns the data bytes
  // that lay before end of file, or nothing (having read nothing) when the
  // file cannot be mapped. Throws IoError(EIO) when a page cannot be
  // brought in.
  std::optional<std::int64_t> load(std::span<const WindowPiece> pieces);

  // Small rewrites and reads (io/mapped_backend.h): moves every request
  // (each one range of the file, not overlapping each other) through the
  // kept mapping, when each lies inside the file as far as transfers
  // through this object have seen it (note_transfer, stores, loads; loads
  // also ask the file's size where they need more: the file may have
  // grown since, never shrunk unless forget() or forget_size() was called
  // in between, see mapped_backend.h), and the file system keeps one page
  // cache for all processes (stores: also a read-write descriptor,
  // coherent_for_mapped_stores). Stores also need the range accessed
  // before (accessed_before: its pages are most likely in the page cache
  // and mapped, so the copy is the whole cost), and allocate its blocks
  // first, once per range (allocated_). Returns false
  // when any of that does not hold, having moved nothing, or when a page
  // could not be brought in (SIGBUS: the file shrank meanwhile, a device
  // error, no space for a hole's block): some bytes may have moved then,
  // and the caller moves all of them again by a system call, which
  // reports the error if there is one.
  bool store_resident(std::span<const IoRequest> requests);
  // Which pages a load may go through: any (a first load faults in each
  // folio, cheaper than a pread for small reads), or only pages already
  // moved through the kept mapping since it was made (their page table
  // entries exist, so the copy is the whole cost: 12% less than a pread
  // of 2-8 MiB, where the faults of unmapped pages would cost more than
  // the pread).
  enum class Pages { any, mapped };
  bool load_resident(std::span<const IoRequest> requests, Pages pages = Pages::any);
  // As store_resident for [offset, offset + bytes), but the bytes are
  // made by `fill(context, to)` straight into the mapped pages, `to`
  // pointing at `offset`: a conversion then costs one pass instead of a
  // pass into a buffer and a copy. `fill` is left by siglongjmp on
  // SIGBUS: plain loops only, nothing to unwind (bus_guard.h).
  bool fill_resident(std::int64_t offset, std::int64_t bytes, void (*fill)(void*, char*),
                     void* context);
  // Notes a transfer of [begin, end) made without the mapping, after it
  // succeeded: the file was at least `end` bytes long then (a write, or a
  // read that returned every byte), and the range counts as accessed.
  void note_transfer(std::int64_t begin, std::int64_t end);
  // The descriptor the mapping maps.
  int fd() const noexcept { return fd_; }

  // Drops the kept mapping and what is known of the file's size (for
  // example after the file was truncated).
  void forget();
  // Drops only what is known of the file's size: at a sync, where another
  // handle's truncation becomes visible to this one (MPI 4.0, 14.6.1).
  void forget_size();

  // Whether [begin, end) lies inside the part of the file that accesses
  // have gone through since the mapping was made (stores, loads, and
  // ranges noted by note_access): a repeated access, whose pages the
  // mapping has (or, after one store, will have) mapped, so that a store
  // costs its copies only, not a page fault per page.
  bool accessed_before(std::int64_t begin, std::int64_t end);
  // Notes an access of [begin, end) made without the mapping.
  void note_access(std::int64_t begin, std::int64_t end);

 private:
  // Makes the kept mapping cover [begin, end) with `protection`; false
  // when mmap refuses.
  bool cover(std::int64_t begin, std::int64_t end, int protection);
  void unmap();

  std::mutex mutex_;
  int fd_;
  // coherent_for_mapped_stores(fd_), asked at the first store.
  std::optional<bool> coherent_;
  char* base_ = nullptr;
  std::int64_t base_offset_ = 0;
  std::size_t length_ = 0;
  int protection_ = 0;
  // The latest ranges noted, as a few hulls: a range within a mapping
  // grain of a hull extends it; one far from all of them replaces the
  // hull extended longest ago (a hull of two far ranges would count the
  // pages between them as noted). Several hulls, so that a call of a few
  // far-apart pieces (a checkpoint's variables, one block each) finds
  // all of them noted when it comes again.
  class RecentRanges {
   public:
    void add(std::int64_t from, std::int64_t to);
    bool covers(std::int64_t from, std::int64_t to) const;

   private:
    static constexpr int kHulls = 8;
    struct Hull {
      std::int64_t begin = 0;
      std::int64_t end = 0;  // empty when end <= begin
      std::int64_t added = 0;
    };
    Hull hulls_[kHulls];
    std::int64_t additions_ = 0;
  };
  // The latest ranges accessed (accessed_before). Kept across remaps: it
  // tells repeated accesses, whose pages a remap faults in once more, then
  // not again.
  RecentRanges touched_;
  // The latest ranges moved through the kept mapping since it was made
  // (Pages::mapped): their pages have page table entries.
  RecentRanges mapped_;
  void touch(std::int64_t begin, std::int64_t end);
  // Ranges this object had the file system allocate (fallocate) since the
  // last forget, exactly (merged only where they touch), at most
  // kMostRanges (then forgotten and allocated again as stores come).
  class AllocatedRanges {
   public:
    bool covers(std::int64_t from, std::int64_t to) const;
    void add(std::int64_t from, std::int64_t to);
    void clear() { ranges_.clear(); }

   private:
    static constexpr std::size_t kMostRanges = 64;
    struct Range {
      std::int64_t begin;
      std::int64_t end;
    };
    std::vector<Range> ranges_;
  };
  // Stores go only to blocks the file system has allocated: a store into
  // a block of delayed allocation, made while other processes extended the
  // file, was lost on ext4 (Linux 6.18), its bytes reading back as zeros
  // after the writer had read them back right: the differential case of
  // seed 4168054 (4 ranks, one 4-byte etype per 2 KiB, the file growing as
  // the windows land) lost one in 3 to 20 of 300 runs (five runs of 300),
  // none with flowio_mapped_io=disable; with each range allocated before
  // its first store, none in 900.
  AllocatedRanges allocated_;
  // Allocates what `ranges` has not got yet; false when fallocate refuses
  // (no space, not supported; then stores stop for good): the caller then
  // makes a system call.
  bool allocate(std::span<const IoRequest> ranges);
  // A length the file had at some point since the last forget: every
  // byte before it exists unless someone shrank the file since.
  std::int64_t known_size_ = 0;
  // Since the last mmap: calls store_resident and load_resident served,
  // and calls they refused for lying outside the mapping.
  std::int64_t calls_served_ = 0;
  std::int64_t calls_outside_ = 0;
  // Whether loads may go through a mapping of this descriptor (a regular
  // file, not O_DIRECT, not write-only, one page cache for all), asked at
  // the first resident load.
  std::optional<bool> loadable_;
  int load_protection_ = 0;
  // The checks and the mapping store_resident and load_resident share;
  // false when the requests cannot be served. Called with mutex_ held.
  bool resident(std::span<const IoRequest> requests, int protection, bool loading,
                Pages pages = Pages::any);
  // The checks and the SIGBUS guard store_resident and fill_resident
  // share: `store(context, base, base_offset)` writes the ranges, file
  // offset k at base + (k - base_offset).
  bool store_guarded(std::span<const IoRequest> ranges,
                     void (*store)(void* context, char* base, std::int64_t base_offset),
                     void* context);
};

}  // namespace flowio::io
