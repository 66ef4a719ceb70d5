#include "io/mapped_sieve.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "flowio/error.h"
#include "io/bus_guard.h"
#include "runtime/core/bulk_copy.h"

namespace flowio::io {
namespace {

// The file's size, if a mapping of `fd` can serve it: a regular file,
// without O_DIRECT (direct writes bypass the page cache a mapping works on),
// open for reading, and for writing too when `writing` (a shared writable
// mapping needs both).
std::optional<std::int64_t> mappable_size(int fd, bool writing) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_DIRECT) != 0) return std::nullopt;
  const int mode = flags & O_ACCMODE;
  if (writing ? mode != O_RDWR : mode == O_WRONLY) return std::nullopt;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::int64_t>(info.st_size);
}

// A shared mapping of [begin, end) of a file, unmapped on destruction.
class Mapping {
 public:
  Mapping(int fd, std::int64_t begin, std::int64_t end, int protection) {
    static const std::int64_t page = ::sysconf(_SC_PAGESIZE);
    base_offset_ = begin / page * page;
    length_ = static_cast<std::size_t>(end - base_offset_);
    void* address = ::mmap(nullptr, length_, protection, MAP_SHARED, fd, base_offset_);
    if (address != MAP_FAILED) base_ = static_cast<char*>(address);
  }
  ~Mapping() {
    if (base_ != nullptr) ::munmap(base_, length_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  bool mapped() const { return base_ != nullptr; }

  // Whether at least three quarters of the mapped pages are in the page
  // cache. Storing into a page that is not costs about twice copying it;
  // into one that is, about a sixth (6ba8c59:bench/README.md, bench/sieve): below
  // about half resident, copying wins.
  bool mostly_resident() const {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((length_ + page - 1) / page);
    if (::mincore(base_, length_, resident.data()) != 0) return false;
    const auto in_cache = static_cast<std::size_t>(
        std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }));
    return 4 * in_cache >= 3 * resident.size();
  }
  // The mapped byte at file offset `offset`.
  char* at(std::int64_t offset) const { return base_ + (offset - base_offset_); }

 private:
  char* base_ = nullptr;
  std::int64_t base_offset_ = 0;
  std::size_t length_ = 0;
};

// The pieces and the mapping a guarded copy works on.
struct Copy {
  std::span<const WindowPiece> pieces;
  const Mapping* mapping;
  std::int64_t end;  // reads: end of the mapped data (end of file)
};

// One past the last byte of any piece: pieces sorted by offset may still
// overlap (reads of the same bytes), so the last one need not end last.
std::int64_t end_of(std::span<const WindowPiece> pieces) {
  std::int64_t end = 0;
  for (const WindowPiece& piece : pieces) end = std::max(end, piece.offset + piece.length);
  return end;
}

}  // namespace

bool write_mapped(int fd, std::span<const WindowPiece> pieces, bool only_if_cached) {
  if (pieces.empty()) return false;
  const std::optional<std::int64_t> size = mappable_size(fd, true);
  const std::int64_t begin = pieces.front().offset;
  const std::int64_t end = end_of(pieces);
  // Pages past end of file, and pages not cached, are new to the page
  // cache either way: copying costs less there than faulting them in (and
  // read-modify-write reads nothing past end of file).
  if (!size || end > *size) return false;
  const Mapping mapping(fd, begin, end, PROT_READ | PROT_WRITE);
  if (!mapping.mapped() || (only_if_cached && !mapping.mostly_resident())) return false;
  // Mode 0 allocates whatever the extent has not got on disk (holes of a
  // sparse file), so that no store needs space the file system might
  // refuse. A failure (no space, unsupported) leaves the window to
  // read/write calls, which report real errors as errors.
  if (::fallocate(fd, 0, begin, end - begin) != 0) return false;
  Copy copy{pieces, &mapping, end};
  const bool stored = copy_catching_bus_errors(
      [](void* context) {
        const Copy& c = *static_cast<const Copy*>(context);
        copy_pieces_to_file_form(
            c.pieces, [&](const WindowPiece& piece) { return c.mapping->at(piece.offset); });
      },
      &copy);
  if (!stored) throw_bus_error("storing a window", fd);
  return true;
}

std::optional<std::int64_t> read_mapped(int fd, std::span<const WindowPiece> pieces,
                                        bool only_if_cached) {
  if (pieces.empty()) return std::nullopt;
  const std::optional<std::int64_t> size = mappable_size(fd, false);
  if (!size) return std::nullopt;
  const std::int64_t begin = pieces.front().offset;
  // Pages past end of file cannot be touched (SIGBUS): map up to it only.
  const std::int64_t end = std::min(end_of(pieces), *size);
  std::optional<Mapping> mapping;
  if (begin < end) {
    mapping.emplace(fd, begin, end, PROT_READ);
    if (!mapping->mapped() || (only_if_cached && !mapping->mostly_resident())) {
      return std::nullopt;
    }
  }
  Copy copy{pieces, mapping ? &*mapping : nullptr, end};
  const bool copied = copy_catching_bus_errors(
      [](void* context) {
        const Copy& c = *static_cast<const Copy*>(context);
        for (const WindowPiece& piece : c.pieces) {
          const std::int64_t valid =
              std::clamp<std::int64_t>(c.end - piece.offset, 0, piece.length);
          if (valid > 0) {
            core::copy_bytes(piece.data, c.mapping->at(piece.offset),
                             static_cast<std::size_t>(valid));
          }
          std::memset(piece.data + valid, 0, static_cast<std::size_t>(piece.length - valid));
        }
      },
      &copy);
  if (!copied) throw_bus_error("reading a window", fd);
  return end;
}

}  // namespace flowio::io
