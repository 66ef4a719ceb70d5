// MappedBackend: serves small rewrites and reads of one file through the
// file's kept shared mapping (file_mapping.h), and everything else
// through the backend beneath it.
//
// Why: a buffered pwrite of 4-32 KiB into pages already in the page
// cache costs a system call, the inode lock (where two processes write
// the same file at once, they take turns on it), and a write_begin /
// write_end per page around the copy; a store through a mapping whose
// pages are mapped costs the copy alone. Measured on this machine (ext4,
// Linux 6.18, pages resident, loaded): 32 KiB pwrite 3.7-4.0 us against
// 0.7-1.1 us of stores, 4 KiB 2.6-2.9 against 0.03-0.15, pread of 32 KiB
// 2.9-3.2 against 0.8-1.2 of loads; 512-byte reads walking through a
// 2 MiB file through a fresh mapping 0.02-0.03 us against 0.34 of pread
// (one read fault maps a whole folio and its cached neighbours); two
// processes on one file widen the gap (6ba8c59:bench/README.md, "bench/repeat").
//
// When: a call of requests whose bytes total at most
// kMappedReadAtMostBytes for reads (above about 1 MiB the page faults of
// pages not yet mapped cost more than pread's page cache walk: 2-4 MiB
// loads measured 0.8-1.0 of pread's speed), or kMappedRereadAtMostBytes for
// reads of pages already moved through the kept mapping (no fault left: a
// copy alone, 2-8 MiB in 0.88 of a pread's time, one process, this
// machine; so a read after a write through the mapping, or a repeated
// read, goes through it), and
// kMappedWriteAtMostBytes for writes (a pwrite holds the inode lock for its
// whole copy, so two processes writing one file take turns, 50 and 100 us
// for 2 MiB each, while stores run side by side: ncio c-c on 2 ranks, 2 and
// 8 MiB per rank and call, went from 0.77-1.03 of MPICH's speed to
// 2.1-2.3), on the mapped descriptor, inside the file as
// far as this process has seen it (reads ask the file's size once where
// they need more), on a file system where all processes share one page
// cache (ext4, xfs, btrfs, tmpfs, f2fs, overlayfs; not NFS, whose client
// writes back whole pages of a mapping and would lose other nodes' bytes
// in them; see file_mapping.h). Writes also wait until their range was
// accessed before (its pages in the page cache and mapped): a first store
// to a page costs a write fault, more than the pwrite. Everything else
// goes to the backend beneath, whose successes teach the mapping the
// file's size and the ranges accessed.
//
// Semantics kept: a store changes exactly the bytes of the requests (a
// neighbour's bytes in the same page, written meanwhile by another
// process, stay); data stored is in the page cache as after a pwrite, so
// fsync / fdatasync (File::sync, the flowio_durable hint) make it durable
// and every process's reads see it at once. The size: a range inside the
// size this process saw stays inside unless the file shrinks, which
// within one open file takes set_size (collective: every process forgets
// the size there, FileMapping::forget) and, from another handle, is seen
// only after a sync (which forgets it too, FileMapping::forget_size). A
// shrink the process is not told of is caught where a stored page lies
// wholly past the new end (SIGBUS: the range then goes to the backend
// beneath, which extends the file again as a pwrite would), and lost
// only in the bytes of the last page past the new end: what MPI leaves
// undefined for a truncation by another handle without sync. Device
// errors and lack of space for a hole's block arrive as SIGBUS too and
// are reported by the backend's system call that redoes the request.
#pragma once

#include <cstdint>
#include <memory>

#include "io/file_mapping.h"
#include "io/storage_backend.h"

namespace flowio::io {

// Calls that move more bytes than these go to the backend beneath.
inline constexpr std::int64_t kMappedReadAtMostBytes = std::int64_t{1} << 20;
inline constexpr std::int64_t kMappedRereadAtMostBytes = std::int64_t{16} << 20;
inline constexpr std::int64_t kMappedWriteAtMostBytes = std::int64_t{16} << 20;
// A fill is a write: the calls fill_in_place is promised take one store each.
static_assert(kFillInPlaceAtMostBytes <= kMappedWriteAtMostBytes);

// Thread safety: as every backend, callable from many threads at once;
// attach() alone must happen before any call.
class MappedBackend : public StorageBackend {
 public:
  explicit MappedBackend(std::unique_ptr<StorageBackend> inner) : inner_(std::move(inner)) {}

  // From now on, requests on `mapping.fd()` may go through `mapping`
  // (borrowed until this backend is destroyed or attach(nullptr)).
  void attach(FileMapping* mapping) noexcept { mapping_ = mapping; }

  const char* name() const noexcept override { return inner_->name(); }
  void write(int fd, std::span<const IoRequest> requests) override;
  void read(int fd, std::span<const IoRequest> requests,
            std::span<std::size_t> bytes_read) override;
  bool fill_in_place(int fd, std::int64_t offset, std::int64_t bytes, void (*fill)(void*, char*),
                     void* context) override;

 private:
  // The mapping, when it may serve calls on `fd` at all.
  FileMapping* mapping_of(int fd) const;

  std::unique_ptr<StorageBackend> inner_;
  FileMapping* mapping_ = nullptr;
};

}  // namespace flowio::io
