// Independent transfers between a typed memory buffer and a file view,
// with the I/O method chosen per batch of pieces (at most 65536 pieces
// whose extent is at most settings.independent_batch_bytes, 16 MiB by
// default):
//
//   one request  the batch covers its extent (memory pieces as iovecs,
//                or staged when they are small): always;
//   mapped       the pieces stored into or loaded from a kept shared
//                mapping of the file (file_mapping.h), for pieces closer
//                than settings.mapped_threshold on average;
//   sieve        the extent read into a staging buffer and the pieces
//                copied out (reads), or copied in and the extent written
//                back (writes allowed to rewrite their extent, below), for
//                pieces closer than settings.sieve_threshold on average;
//   vectored     one request per run of touching pieces, batched.
//
// Writes are not sieved by read-modify-write unless the caller says the
// extent is theirs: it would write back the bytes between the pieces as
// they were read, losing what another process wrote there meanwhile, and
// independent writers of interleaved bytes are legal MPI. The caller says
// so (`may_rewrite_extent`) when it holds the file's sieve lock over the
// whole extent while every other writer of the file takes it too (api/
// file_impl.h: whenever some process's view has holes), or in atomic mode when
// no one else may write the extent meanwhile (sync::AtomicMode::
// may_rewrite_extent: a byte-range lease over it, or bytes between the
// pieces that no other process's view holds). Such a write is sieved in
// batches of at most 512 KiB (ROMIO's default ind_wr_buffer_size) where its
// pieces are close together (worth_sieving: mean distance below
// settings.sieve_threshold, or the hint romio_ds_write=enable; never with
// romio_ds_write=disable or a file that cannot be read). Otherwise, mapped
// stores change only the bytes stored, so writes use them where the file
// system keeps one page cache for all writers and the descriptor is open
// read-write (coherent_for_mapped_stores); elsewhere, and for pieces far
// apart, writes are vectored.
//
// Reads stop at end of file: memory for bytes past it is left untouched.
#pragma once

#include <cstdint>

#include "io/file_mapping.h"
#include "io/storage_backend.h"
#include "io/window_io.h"
#include "runtime/core/file_view.h"
#include "runtime/core/memory_layout.h"

namespace flowio::io {

// Writes the memory's data to the view's stream from stream byte
// `stream_position`. `settings` come from the write hints: sieve disable
// forbids mapped stores (every batch vectored), mapping disable too.
// `may_rewrite_extent`: no one else writes the bytes between the pieces
// while this call runs, so each batch whose pieces are close together may
// be read, modified and written back as a window (window_io.h). Throws IoError on
// failure. Returns the bytes written.
std::int64_t write_independent(StorageBackend& backend, int fd, FileMapping& mapping,
                               const core::FileView& view, std::int64_t stream_position,
                               const core::MemoryLayout& memory, const WindowIoSettings& settings,
                               bool may_rewrite_extent = false);

// Reads the view's stream from `stream_position` into the memory, the
// method per batch chosen by `settings` (the read hints). Returns the bytes
// read, a prefix of the stream (less than asked when the file ends).
std::int64_t read_independent(StorageBackend& backend, int fd, FileMapping& mapping,
                              const core::FileView& view, std::int64_t stream_position,
                              const core::MemoryLayout& memory, const WindowIoSettings& settings);

}  // namespace flowio::io
