// Data sieving through a shared mapping of the file: the pieces of a window
// are stored into (or copied out of) the page cache directly, instead of
// moving the whole covering extent through a staging buffer. For small
// pieces far apart this replaces two copies of the extent (read, then write
// back) by one page fault per page (6ba8c59:bench/README.md, "bench/sieve").
//
// Used only for regular files opened read-write without O_DIRECT, for
// extents inside the file and mostly in the page cache already (rewrites
// and re-reads): faulting pages in costs more than copying them. Before
// storing, the extent's blocks are reserved with fallocate, so that a store
// never needs space the file system cannot give (which would arrive as
// SIGBUS, not as an error); where fallocate is unsupported nothing is
// mapped. A page that cannot be brought in (a device error, the file
// truncated meanwhile) raises SIGBUS in the copy, which is caught
// (bus_guard.h) and thrown as IoError(io, EIO).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "io/window_piece.h"

namespace flowio::io {

// Extents below this many bytes are not mapped: mmap, munmap and the TLB
// shootdown cost more than copying them.
inline constexpr std::int64_t kMapAtLeastBytes = std::int64_t{1} << 20;

// Stores every piece (sorted by offset, not overlapping) into the file
// through a mapping of their covering extent, in its file form
// (copy_to_file_form). Returns false, having
// changed nothing, when the file cannot be mapped for writing or the
// extent is not inside the file. Throws IoError when a page cannot be
// brought in (some pieces may be stored by then).
// With `only_if_cached`, also when fewer than three quarters of the
// extent's pages are in the page cache.
bool write_mapped(int fd, std::span<const WindowPiece> pieces, bool only_if_cached);

// Copies every piece out of a mapping of the file. Memory for bytes past end
// of file is zero-filled. Returns where the data ended: the pieces' end, or
// the end of file when it lay before it; or nothing (having read nothing)
// when the file cannot be mapped or, with `only_if_cached`, the extent
// before end of file is not mostly cached. Throws IoError when a page cannot
// be brought in.
std::optional<std::int64_t> read_mapped(int fd, std::span<const WindowPiece> pieces,
                                        bool only_if_cached);

}  // namespace flowio::io
