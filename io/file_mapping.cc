#include "io/file_mapping.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include "flowio/error.h"
#include "io/bus_guard.h"
#include "runtime/core/bulk_copy.h"

namespace flowio::io {
namespace {

// Mappings start and end on these boundaries, so that neighbouring calls
// find the range they need mapped already.
constexpr std::int64_t kMappingGrain = std::int64_t{2} << 20;
// A new range near the kept mapping extends it rather than replacing it
// (alternating accesses to two nearby places stay mapped), as long as the
// whole stays below this: a mapping's page tables cost memory (2 MiB per
// GiB touched) and unmapping it costs time in proportion.
constexpr std::int64_t kLargestExtended = std::int64_t{1} << 30;
// Calls the mapping serves (store_resident, load_resident) before one of
// them may move it to a range it does not cover.
constexpr std::int64_t kCallsBeforeRemap = 64;

// File systems on which all writers of a file share one page cache (see
// the header). XFS and F2FS have no constant in <linux/magic.h>.
constexpr long kXfsMagic = 0x58465342;
constexpr long kF2fsMagic = 0xF2F52010;

bool shares_one_page_cache(long type) {
  switch (type) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case kXfsMagic:
    case kF2fsMagic:
      return true;
    default:
      return false;
  }
}

// memcpy of a length known only at run time is a library call; the
// typical piece of a noncontiguous access is a few bytes (8-byte regions),
// where that call costs more than the copy. Pieces of 8 to 16 bytes are
// copied as two overlapping 8-byte words.
inline void copy_piece(char* to, const char* from, std::int64_t length) {
  if (length >= 8 && length <= 16) {
    std::uint64_t head = 0, tail = 0;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + length - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + length - 8, &tail, 8);
    return;
  }
  core::copy_bytes(to, from, static_cast<std::size_t>(length));
}

// How many pieces ahead a copy asks for the cache line it will touch.
constexpr std::size_t kPrefetchAhead = 16;

struct Copy {
  std::span<const WindowPiece> pieces;
  char* base;
  std::int64_t base_offset;
};

struct Resident {
  std::span<const IoRequest> requests;
  char* base;
  std::int64_t base_offset;
};

}  // namespace

bool coherent_for_mapped_stores(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_DIRECT) != 0 || (flags & O_ACCMODE) != O_RDWR) return false;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return false;
  struct statfs system {};
  return ::fstatfs(fd, &system) == 0 && shares_one_page_cache(static_cast<long>(system.f_type));
}

FileMapping::~FileMapping() { unmap(); }

void FileMapping::unmap() {
  if (base_ != nullptr) ::munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
}

void FileMapping::RecentRanges::add(std::int64_t from, std::int64_t to) {
  ++additions_;
  // Ranges close by (the batches of one call, a hole apart) extend a hull.
  Hull* oldest = &hulls_[0];
  for (Hull& hull : hulls_) {
    if (hull.begin < hull.end && to + kMappingGrain >= hull.begin &&
        from <= hull.end + kMappingGrain) {
      hull.begin = std::min(hull.begin, from);
      hull.end = std::max(hull.end, to);
      hull.added = additions_;
      return;
    }
    if (hull.added < oldest->added) oldest = &hull;
  }
  *oldest = Hull{from, to, additions_};
}

bool FileMapping::RecentRanges::covers(std::int64_t from, std::int64_t to) const {
  for (const Hull& hull : hulls_) {
    if (hull.begin < hull.end && hull.begin <= from && to <= hull.end) return true;
  }
  return false;
}

// Every range moved through the mapping counts as accessed too.
void FileMapping::touch(std::int64_t begin, std::int64_t end) { touched_.add(begin, end); }

bool FileMapping::accessed_before(std::int64_t begin, std::int64_t end) {
  std::lock_guard lock(mutex_);
  return touched_.covers(begin, end);
}

void FileMapping::note_access(std::int64_t begin, std::int64_t end) {
  std::lock_guard lock(mutex_);
  touch(begin, end);
}

void FileMapping::forget() {
  std::lock_guard lock(mutex_);
  unmap();
  known_size_ = 0;
  allocated_.clear();
}

void FileMapping::forget_size() {
  std::lock_guard lock(mutex_);
  known_size_ = 0;
  allocated_.clear();
}

bool FileMapping::AllocatedRanges::covers(std::int64_t from, std::int64_t to) const {
  return std::any_of(ranges_.begin(), ranges_.end(),
                     [&](const Range& range) { return range.begin <= from && to <= range.end; });
}

void FileMapping::AllocatedRanges::add(std::int64_t from, std::int64_t to) {
  // Touching or overlapping ranges merge; nothing between two ranges is
  // ever counted, unlike RecentRanges' hulls.
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    if (it->begin <= to && from <= it->end) {
      from = std::min(from, it->begin);
      to = std::max(to, it->end);
      it = ranges_.erase(it);
    } else {
      ++it;
    }
  }
  if (ranges_.size() == kMostRanges) ranges_.clear();
  ranges_.push_back(Range{from, to});
}

bool FileMapping::allocate(std::span<const IoRequest> ranges) {
  for (const IoRequest& range : ranges) {
    const std::int64_t end = range.file_offset + static_cast<std::int64_t>(range.bytes);
    if (range.bytes == 0 || allocated_.covers(range.file_offset, end)) continue;
    // Mode 0 inside the file changes neither its size nor its bytes.
    if (::fallocate(fd_, 0, range.file_offset, end - range.file_offset) != 0) {
      // A file system without fallocate refuses every range alike: no
      // store of this descriptor goes through the mapping again.
      if (errno == EOPNOTSUPP || errno == ENOSYS) coherent_ = false;
      return false;
    }
    allocated_.add(range.file_offset, end);
  }
  return true;
}

void FileMapping::note_transfer(std::int64_t begin, std::int64_t end) {
  if (end <= begin) return;  // no byte moved: the file need not reach `begin`
  std::lock_guard lock(mutex_);
  known_size_ = std::max(known_size_, end);
  touch(begin, end);
}

bool FileMapping::resident(std::span<const IoRequest> requests, int protection, bool loading,
                           Pages pages) {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = 0;
  for (const IoRequest& request : requests) {
    if (request.bytes == 0) continue;
    begin = std::min(begin, request.file_offset);
    end = std::max(end, request.file_offset + static_cast<std::int64_t>(request.bytes));
  }
  if (end <= begin) return false;
  if (pages == Pages::mapped && !(base_ != nullptr && (protection_ & protection) == protection &&
                                  mapped_.covers(begin, end))) {
    return false;
  }
  // Bytes past the known size may lie past end of file, where a store is
  // lost (in the last page) or raises SIGBUS, and a load must stop. Loads
  // ask the file (one fstat) where they need more than is known: a read
  // of a file opened for reading is usually a first access.
  if (end > known_size_) {
    struct stat info {};
    if (!loading || ::fstat(fd_, &info) != 0) return false;
    known_size_ = std::max<std::int64_t>(known_size_, info.st_size);
    if (end > known_size_) return false;
  }
  // A first store to a page costs a write fault (the file system's
  // page_mkwrite) on top of the copy, more than a pwrite: stores wait until
  // the range was accessed once. A first load costs a read fault that maps
  // the page's whole folio and its cached neighbours (fault-around), less
  // than a pread per call for reads that walk through the file (bench/
  // README.md, "bench/hdf5"): loads go through the mapping at once.
  if (!loading && !touched_.covers(begin, end)) return false;
  // A range outside the kept mapping remaps it (munmap, mmap, and page
  // faults again for everything mapped before). A near one, within
  // kLargestExtended of it, extends it (cover()) at once: a mapping only
  // grows that way, so calls among a few places near each other (the
  // pieces of one call, far apart in a checkpoint's file) settle on one
  // mapping of all of them. Calls that alternate between parts of the
  // file too far apart to be mapped together would remap at every call: a
  // call far outside remaps only once more calls went outside than the
  // mapping served since it was made, or kCallsBeforeRemap did; the others
  // make system calls. So calls that moved on move the mapping after a
  // call or two, and alternating ones move it at most once per
  // kCallsBeforeRemap.
  const std::int64_t mapped_end = base_offset_ + static_cast<std::int64_t>(length_);
  const bool compatible = base_ != nullptr && (protection_ & protection) == protection;
  const bool covered = compatible && base_offset_ <= begin && end <= mapped_end;
  const bool near =
      compatible && std::max(end, mapped_end) - std::min(begin, base_offset_) <= kLargestExtended;
  if (!covered && !near && base_ != nullptr && calls_outside_ < kCallsBeforeRemap &&
      calls_outside_ <= calls_served_) {
    ++calls_outside_;
    return false;
  }
  if (!cover(begin, end, protection)) return false;
  ++calls_served_;
  if (loading) touch(begin, end);
  // Stored or loaded below (a failure forgets the size, not this: a page
  // that raised SIGBUS is not mapped, and its next load faults again).
  mapped_.add(begin, end);
  return true;
}

bool FileMapping::store_guarded(std::span<const IoRequest> ranges,
                                void (*store)(void* context, char* base, std::int64_t base_offset),
                                void* context) {
  std::lock_guard lock(mutex_);
  if (!coherent_) coherent_ = coherent_for_mapped_stores(fd_);
  if (!*coherent_ || !resident(ranges, PROT_READ | PROT_WRITE, false)) return false;
  if (!allocate(ranges)) return false;
  struct Store {
    void (*store)(void*, char*, std::int64_t);
    void* context;
    char* base;
    std::int64_t base_offset;
  } call{store, context, base_, base_offset_};
  if (copy_catching_bus_errors(
          [](void* argument) {
            const Store& c = *static_cast<const Store*>(argument);
            c.store(c.context, c.base, c.base_offset);
          },
          &call)) {
    return true;
  }
  // The file is shorter than thought (or a page failed): the caller's
  // system call learns which, and note_transfer the size again.
  known_size_ = 0;
  return false;
}

bool FileMapping::store_resident(std::span<const IoRequest> requests) {
  return store_guarded(
      requests,
      [](void* context, char* base, std::int64_t base_offset) {
        for (const IoRequest& request : *static_cast<std::span<const IoRequest>*>(context)) {
          char* to = base + (request.file_offset - base_offset);
          for (const iovec& piece : request.memory) {
            core::copy_bytes(to, piece.iov_base, piece.iov_len);
            to += piece.iov_len;
          }
        }
      },
      &requests);
}

bool FileMapping::fill_resident(std::int64_t offset, std::int64_t bytes, void (*fill)(void*, char*),
                                void* context) {
  const IoRequest range{offset, {}, static_cast<std::size_t>(bytes)};
  struct Filling {
    void (*fill)(void*, char*);
    void* context;
    std::int64_t offset;
  } filling{fill, context, offset};
  return store_guarded(
      std::span<const IoRequest>(&range, 1),
      [](void* argument, char* base, std::int64_t base_offset) {
        const Filling& f = *static_cast<const Filling*>(argument);
        f.fill(f.context, base + (f.offset - base_offset));
      },
      &filling);
}

bool FileMapping::load_resident(std::span<const IoRequest> requests, Pages pages) {
  std::lock_guard lock(mutex_);
  if (!loadable_) {
    const int flags = ::fcntl(fd_, F_GETFL);
    struct stat info {};
    struct statfs system {};
    loadable_ = flags >= 0 && (flags & O_DIRECT) == 0 && (flags & O_ACCMODE) != O_WRONLY &&
                ::fstat(fd_, &info) == 0 && S_ISREG(info.st_mode) && ::fstatfs(fd_, &system) == 0 &&
                shares_one_page_cache(static_cast<long>(system.f_type));
    // Mapped for writing too where the descriptor allows it: a store
    // after loads then finds the mapping it needs.
    load_protection_ = (flags & O_ACCMODE) == O_RDWR ? PROT_READ | PROT_WRITE : PROT_READ;
  }
  if (!*loadable_ || !resident(requests, load_protection_, true, pages)) return false;
  Resident copy{requests, base_, base_offset_};
  if (copy_catching_bus_errors(
          [](void* context) {
            const Resident& c = *static_cast<const Resident*>(context);
            for (const IoRequest& request : c.requests) {
              const char* from = c.base + (request.file_offset - c.base_offset);
              for (const iovec& piece : request.memory) {
                core::copy_bytes(piece.iov_base, from, piece.iov_len);
                from += piece.iov_len;
              }
            }
          },
          &copy)) {
    return true;
  }
  known_size_ = 0;
  return false;
}

bool FileMapping::cover(std::int64_t begin, std::int64_t end, int protection) {
  const std::int64_t mapped_end = base_offset_ + static_cast<std::int64_t>(length_);
  if (base_ != nullptr && (protection_ & protection) == protection && base_offset_ <= begin &&
      end <= mapped_end) {
    return true;
  }
  std::int64_t from = begin / kMappingGrain * kMappingGrain;
  std::int64_t to = (end + kMappingGrain - 1) / kMappingGrain * kMappingGrain;
  if (base_ != nullptr && (protection_ & protection) == protection &&
      std::max(to, mapped_end) - std::min(from, base_offset_) <= kLargestExtended) {
    from = std::min(from, base_offset_);
    to = std::max(to, mapped_end);
    // Grown to twice its size (within the bound) where it grows forward:
    // calls that walk through the file then remap a logarithmic number of
    // times, not once per call, and each remap drops the page tables of
    // everything mapped so far (a 32 MiB strided write in 1 MiB calls spent
    // a third of its time unmapping, bench/locks --view=strided).
    if (to > mapped_end)
      to = std::max(to, std::min(from + 2 * (to - from), from + kLargestExtended));
  }
  unmap();
  // Pages past end of file may be mapped; only touching them faults, and
  // callers touch only bytes inside the file.
  void* address =
      ::mmap(nullptr, static_cast<std::size_t>(to - from), protection, MAP_SHARED, fd_, from);
  if (address == MAP_FAILED) return false;
  base_ = static_cast<char*>(address);
  mapped_ = {};
  calls_served_ = 0;
  calls_outside_ = 0;
  base_offset_ = from;
  length_ = static_cast<std::size_t>(to - from);
  protection_ = protection;
  return true;
}

bool FileMapping::store(std::span<const WindowPiece> pieces) {
  if (pieces.empty()) return true;
  std::lock_guard lock(mutex_);
  if (!coherent_) coherent_ = coherent_for_mapped_stores(fd_);
  if (!*coherent_) return false;
  const std::int64_t begin = pieces.front().offset;
  const std::int64_t end = pieces.back().offset + pieces.back().length;
  // Mode 0 gives blocks to whatever the range has not got on disk (holes,
  // the part past end of file) and extends the file to `end`, never
  // shrinking it, so concurrent writers extending it cannot cut each other.
  if (::fallocate(fd_, 0, begin, end - begin) != 0) return false;
  if (!cover(begin, end, PROT_READ | PROT_WRITE)) return false;
  Copy copy{pieces, base_, base_offset_};
  const bool stored = copy_catching_bus_errors(
      [](void* context) {
        const Copy& c = *static_cast<const Copy*>(context);
        for (std::size_t i = 0; i < c.pieces.size(); ++i) {
          if (i + kPrefetchAhead < c.pieces.size()) {
            __builtin_prefetch(c.base + (c.pieces[i + kPrefetchAhead].offset - c.base_offset), 1);
          }
          const WindowPiece& piece = c.pieces[i];
          copy_piece(c.base + (piece.offset - c.base_offset), piece.data, piece.length);
        }
      },
      &copy);
  if (!stored) throw_bus_error("storing data", fd_);
  touch(begin, end);
  mapped_.add(begin, end);
  known_size_ = std::max(known_size_, end);  // fallocate extended it
  return true;
}

std::optional<std::int64_t> FileMapping::load(std::span<const WindowPiece> pieces) {
  if (pieces.empty()) return 0;
  std::lock_guard lock(mutex_);
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || (flags & O_DIRECT) != 0 || (flags & O_ACCMODE) == O_WRONLY) return std::nullopt;
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  const std::int64_t size = info.st_size;
  // The pieces before end of file: a prefix, as they are sorted.
  const std::size_t inside =
      pieces.back().offset < size
          ? pieces.size()
          : static_cast<std::size_t>(
                std::partition_point(pieces.begin(), pieces.end(),
                                     [size](const WindowPiece& p) { return p.offset < size; }) -
                pieces.begin());
  if (inside == 0) return 0;
  const std::int64_t begin = pieces.front().offset;
  const std::int64_t end = std::min(pieces[inside - 1].offset + pieces[inside - 1].length, size);
  const int protection = (flags & O_ACCMODE) == O_RDWR ? PROT_READ | PROT_WRITE : PROT_READ;
  if (!cover(begin, end, protection)) return std::nullopt;
  struct Load {
    Copy copy;
    std::int64_t end;
  } load{{pieces.first(inside), base_, base_offset_}, end};
  const bool copied = copy_catching_bus_errors(
      [](void* context) {
        const Load& l = *static_cast<const Load*>(context);
        const std::span<const WindowPiece> pieces = l.copy.pieces;
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          // Small pieces far apart miss the cache one line each; asking for
          // a later piece's line now overlaps the misses.
          if (i + kPrefetchAhead < pieces.size()) {
            __builtin_prefetch(l.copy.base +
                               (pieces[i + kPrefetchAhead].offset - l.copy.base_offset));
          }
          const WindowPiece& piece = pieces[i];
          const std::int64_t valid = std::min(piece.length, l.end - piece.offset);
          copy_piece(piece.data, l.copy.base + (piece.offset - l.copy.base_offset), valid);
        }
      },
      &load);
  if (!copied) throw_bus_error("loading data", fd_);
  touch(begin, end);
  mapped_.add(begin, end);
  known_size_ = std::max(known_size_, size);
  std::int64_t before_end = 0;
  for (const WindowPiece& piece : pieces.first(inside)) {
    before_end += std::min(piece.length, end - piece.offset);
  }
  return before_end;
}

}  // namespace flowio::io
