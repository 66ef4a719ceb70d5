// Window I/O: how an aggregator moves one buffer iteration (a window of its
// file realm) between the file and memory. The window's pieces come from
// many clients; each has its data at its own place in memory.
//
// Methods, chosen per window:
//   contiguous  the pieces cover the window's extent without holes: one
//               request (its iovecs point at the pieces' memory, or, for
//               small pieces on average (writes under 64 KiB, reads under
//               512 bytes), the pieces copied through the staging buffer,
//               which costs less than small iovecs);
//   sieve       read-modify-write of the covering extent through a staging
//               buffer: two large requests whatever the number of pieces;
//   mapped      sieving through a shared mapping of the file
//               (mapped_sieve.h): the pieces stored into the page cache
//               directly, when the settings and the file allow it; it
//               costs so much less than copying extents that it also
//               replaces vectored I/O for pieces up to mapped_threshold
//               apart;
//   vectored    one request per run of touching pieces, no staging, all
//               submitted in one batch.
// A window whose pieces cover it is never read, whatever the settings.
// Writes store each piece in its file form (WindowPiece::reversed_unit):
// sieving and mapped stores convert as they copy; contiguous requests
// with iovecs and vectored ones go through a cache-sized part of the
// staging buffer instead, converted and written a part at a time.
// Sieving writes bytes of the holes back unchanged, so a write sieves only
// while no one else may write its extent: it holds the file's SieveLock
// over it (io/sieve_lock.h) unless its caller keeps writers out otherwise;
// other collective operations' data phases keep out of its extent
// (runtime/engine/operation_order.h). With lock_every_write, every window
// write holds the lock, whatever its method.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/sieve_lock.h"
#include "io/storage_backend.h"
#include "io/window_piece.h"

namespace flowio::io {

enum class SieveMode { automatic, enable, disable };

// Parses ROMIO's values "automatic", "enable", "disable"; throws UsageError.
SieveMode parse_sieve_mode(const std::string& text);

struct WindowIoSettings {
  SieveMode sieve = SieveMode::automatic;
  // automatic: sieve when the extent divided by the number of pieces (the
  // mean distance from one piece to the next) is below this many bytes.
  std::int64_t sieve_threshold = 16384;
  // Sieving through a mapping of the file: automatic, for extents of at
  // least kMapAtLeastBytes mostly in the page cache; enable, for every
  // sieved window the file allows; disable, never.
  SieveMode mapping = SieveMode::automatic;
  // With sieving automatic, a window that would go vectored is sieved
  // through a mapping instead (where one is possible) while the mean
  // distance between its pieces is below this.
  std::int64_t mapped_threshold = 262144;
  // Whether the file may be read: false for a file whose permissions grant
  // write access only. Writes then never sieve or map (both read the
  // window first); a window with holes goes vectored whatever `sieve` says.
  bool file_readable = true;
  // Some process of the file may sieve its independent writes (a view
  // with holes somewhere, api/file_impl.h): every window write then holds the
  // SieveLock over its extent whatever its method, not only when it
  // sieves, so that it never lands in the holes of an independent sieving
  // write between that write's read and its write back.
  bool lock_every_write = false;
  // Independent accesses (independent_transfer.h) only: the largest file
  // extent one batch of pieces spans, which bounds the staging buffer a
  // sieved read or a staged write uses (ROMIO's ind_rd_buffer_size and
  // ind_wr_buffer_size). A piece longer than this is a batch of its own.
  std::int64_t independent_batch_bytes = std::int64_t{16} << 20;
};

enum class WindowMethod { none, contiguous, sieve, mapped, vectored };
const char* window_method_name(WindowMethod method);

struct WindowIoResult {
  WindowMethod method = WindowMethod::none;
  std::int64_t requests = 0;    // file requests issued
  std::int64_t file_bytes = 0;  // bytes moved to or from the file
  std::int64_t bytes_read = 0;  // reads: data bytes that lay before end of file
  // Reads: where the data ended, as the read itself found it: the end of
  // file when it lay inside the pieces' extent, else the extent's end.
  // Callers that split the window among several clients count each one's
  // bytes up to it (not up to the file's size now, which may have changed).
  std::int64_t data_end = 0;
};

// `pieces` are sorted by offset and do not overlap. `staging` is reused
// from call to call for sieving. A window sieves only under `sieve_lock`
// (the lock of the file `fd` writes), or with none (nullptr) where the
// caller keeps every other writer out of the window's extent by other
// means (an independent atomic-mode write allowed to rewrite its extent,
// io/independent_transfer.h); where the file system has no locks it goes
// vectored instead. Throw IoError on failure.
WindowIoResult write_window(StorageBackend& backend, int fd, std::span<const WindowPiece> pieces,
                            const WindowIoSettings& settings, std::vector<char>& staging,
                            SieveLock* sieve_lock);
// Reads each piece into its memory. Memory for bytes past end of file is
// zero-filled.
WindowIoResult read_window(StorageBackend& backend, int fd, std::span<const WindowPiece> pieces,
                           const WindowIoSettings& settings, std::vector<char>& staging);

}  // namespace flowio::io
