// Helpers shared by the io tests: scratch files under TEST_TMPDIR, a byte
// pattern keyed by file offset, sets of requests with guarded memory, and
// running one test body over every storage backend.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/file_descriptor.h"
#include "io/posix_backend.h"
#include "io/storage_backend.h"
#include "io/uring_backend.h"
#include "tests/support/test_progress.h"

namespace flowio::io::testing {

// Bazel gives every test its own TEST_TMPDIR; /tmp serves outside Bazel.
inline std::string scratch_directory() {
  const char* directory = std::getenv("TEST_TMPDIR");
  return directory != nullptr && *directory != '\0' ? directory : "/tmp";
}

// A file created empty (read-write) for one test and removed afterwards.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name)
      : path_(scratch_directory() + "/flowio-" + std::to_string(::getpid()) + "-" + name),
        descriptor_(FileDescriptor::open(path_, O_RDWR | O_CREAT | O_TRUNC, 0644)) {}
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  int fd() const noexcept { return descriptor_.get(); }
  const std::string& path() const noexcept { return path_; }
  FileDescriptor& descriptor() noexcept { return descriptor_; }

 private:
  std::string path_;
  FileDescriptor descriptor_;
};

// The byte the tests store at `file_offset`. It changes from one offset to
// the next and has no power-of-two period, so a range moved to the wrong
// place or in the wrong order shows.
inline unsigned char pattern_byte(std::int64_t file_offset) {
  return static_cast<unsigned char>((file_offset * 7 + file_offset / 253 + 1) & 0xff);
}

// The pattern repeats every 253 * 256 bytes; one period, kept so that large
// ranges are filled and compared with memcpy and memcmp (fast also in
// sanitizer builds).
inline constexpr std::size_t pattern_period = 253 * 256;

inline const std::vector<unsigned char>& pattern_period_bytes() {
  static const std::vector<unsigned char> bytes = [] {
    std::vector<unsigned char> period(pattern_period);
    for (std::size_t i = 0; i < pattern_period; ++i) {
      period[i] = pattern_byte(static_cast<std::int64_t>(i));
    }
    return period;
  }();
  return bytes;
}

// Calls `chunk(pattern_pointer, position, length)` over the pattern of
// [file_offset, file_offset + length), one period-bounded chunk at a time;
// `position` counts from 0. Stops early when `chunk` returns false.
template <class Chunk>
bool for_pattern_chunks(std::int64_t file_offset, std::size_t length, Chunk&& chunk) {
  const unsigned char* period = pattern_period_bytes().data();
  std::size_t position = 0;
  while (position < length) {
    const std::size_t phase =
        static_cast<std::size_t>(file_offset + static_cast<std::int64_t>(position)) %
        pattern_period;
    const std::size_t count = std::min(length - position, pattern_period - phase);
    if (!chunk(period + phase, position, count)) return false;
    position += count;
  }
  return true;
}

inline void fill_pattern(unsigned char* memory, std::int64_t file_offset, std::size_t length) {
  for_pattern_chunks(file_offset, length,
                     [&](const unsigned char* pattern, std::size_t position, std::size_t count) {
                       std::memcpy(memory + position, pattern, count);
                       return true;
                     });
}

// The first byte of `memory` that differs from the pattern of `file_offset`,
// or `length` when all match.
inline std::size_t first_pattern_mismatch(const unsigned char* memory, std::int64_t file_offset,
                                          std::size_t length) {
  std::size_t mismatch = length;
  for_pattern_chunks(file_offset, length,
                     [&](const unsigned char* pattern, std::size_t position, std::size_t count) {
                       if (std::memcmp(memory + position, pattern, count) == 0) return true;
                       for (std::size_t i = 0;; ++i) {
                         if (memory[position + i] != pattern[i]) {
                           mismatch = position + i;
                           return false;
                         }
                       }
                     });
  return mismatch;
}

// The first byte of `memory` that is not `value`, or `length` when all are.
inline std::size_t first_not_equal(const unsigned char* memory, std::size_t length,
                                   unsigned char value) {
  for (std::size_t i = 0; i < length; ++i) {
    if (memory[i] != value) return i;
  }
  return length;
}

// What memory the backends must not write holds.
inline constexpr unsigned char untouched = 0xa5;

// Writes `size` bytes of the pattern at offset 0 with plain pwrite, so that
// read tests do not depend on a backend's write.
inline void write_pattern_file(int fd, std::int64_t size) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
  fill_pattern(bytes.data(), 0, bytes.size());
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t written =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    REQUIRE(written > 0);
    done += static_cast<std::size_t>(written);
  }
}

// File ranges, each moved from or to a list of memory pieces. All pieces
// live in one buffer, in order, each followed by a guard byte that no
// backend may touch.
class RequestSet {
 public:
  void add(std::int64_t file_offset, std::vector<std::size_t> piece_lengths) {
    std::size_t bytes = 0;
    for (std::size_t length : piece_lengths) bytes += length;
    ranges_.push_back({file_offset, pieces_.size(), piece_lengths.size(), bytes});
    for (std::size_t length : piece_lengths) {
      pieces_.push_back({memory_size_, length});
      memory_size_ += length + 1;
    }
    built_ = false;
  }

  std::size_t size() const noexcept { return ranges_.size(); }

  // The requests; valid until the next add().
  std::span<const IoRequest> requests() {
    build();
    return requests_;
  }

  // Pieces hold the pattern of the file offsets they map to; guards are
  // untouched.
  void fill_with_pattern() {
    build();
    std::fill(memory_.begin(), memory_.end(), untouched);
    for (const Range& range : ranges_) {
      std::int64_t file_offset = range.file_offset;
      for (std::size_t p = range.first_piece; p < range.first_piece + range.piece_count; ++p) {
        fill_pattern(memory_.data() + pieces_[p].memory_offset, file_offset, pieces_[p].length);
        file_offset += static_cast<std::int64_t>(pieces_[p].length);
      }
    }
  }

  void fill_untouched() {
    build();
    std::fill(memory_.begin(), memory_.end(), untouched);
  }

  // After a read from a file of `file_size` bytes of the pattern: each count
  // in `bytes_read` is right, bytes before end of file hold the pattern, and
  // bytes past it and every guard are untouched. Returns the first mismatch,
  // or "" when there is none.
  std::string check_read(std::span<const std::size_t> bytes_read, std::int64_t file_size) const {
    for (std::size_t r = 0; r < ranges_.size(); ++r) {
      const Range& range = ranges_[r];
      const std::int64_t available = std::max<std::int64_t>(0, file_size - range.file_offset);
      const auto expected = std::min<std::size_t>(range.bytes, static_cast<std::size_t>(available));
      if (bytes_read[r] != expected) {
        return "request " + std::to_string(r) + ": bytes_read " + std::to_string(bytes_read[r]) +
               ", expected " + std::to_string(expected);
      }
      std::int64_t file_offset = range.file_offset;
      for (std::size_t p = range.first_piece; p < range.first_piece + range.piece_count; ++p) {
        const Piece& piece = pieces_[p];
        const unsigned char* memory = memory_.data() + piece.memory_offset;
        // Bytes before end of file, then bytes past it plus the guard.
        const std::int64_t before_end = std::clamp<std::int64_t>(
            file_size - file_offset, 0, static_cast<std::int64_t>(piece.length));
        const auto read_length = static_cast<std::size_t>(before_end);
        std::size_t at = first_pattern_mismatch(memory, file_offset, read_length);
        if (at == read_length) {
          at = read_length +
               first_not_equal(memory + read_length, piece.length + 1 - read_length, untouched);
        }
        if (at <= piece.length) {
          return "request " + std::to_string(r) + " piece " + std::to_string(p) + " byte " +
                 std::to_string(at) + (at == piece.length ? " (guard)" : "") +
                 (at < read_length ? " (before end of file)" : " (past end of file)") + ": " +
                 std::to_string(memory[at]);
        }
        file_offset += static_cast<std::int64_t>(piece.length);
      }
    }
    return "";
  }

  // After a write of the pattern into an empty file: read with plain pread,
  // every range holds the pattern, every byte outside the ranges is zero
  // (a hole), and the file ends where the last range ends. Returns the first
  // mismatch, or "".
  std::string check_file(int fd) const {
    std::int64_t end = 0;
    for (const Range& range : ranges_) {
      end = std::max(end, range.file_offset + static_cast<std::int64_t>(range.bytes));
    }
    const off_t size = ::lseek(fd, 0, SEEK_END);
    if (size != end) {
      return "file size " + std::to_string(size) + ", expected " + std::to_string(end);
    }
    std::vector<unsigned char> image(static_cast<std::size_t>(end));
    std::size_t done = 0;
    while (done < image.size()) {
      const ssize_t got =
          ::pread(fd, image.data() + done, image.size() - done, static_cast<off_t>(done));
      if (got <= 0) return "pread failed: errno " + std::to_string(errno);
      done += static_cast<std::size_t>(got);
    }
    std::vector<const Range*> by_offset;
    for (const Range& range : ranges_) {
      if (range.bytes > 0) by_offset.push_back(&range);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](const Range* a, const Range* b) { return a->file_offset < b->file_offset; });
    std::size_t position = 0;  // checked up to here
    for (const Range* range : by_offset) {
      const auto start = static_cast<std::size_t>(range->file_offset);
      const std::size_t hole = first_not_equal(image.data() + position, start - position, 0);
      if (hole < start - position) {
        return "file byte " + std::to_string(position + hole) + " in a hole is not zero";
      }
      const std::size_t at =
          first_pattern_mismatch(image.data() + start, range->file_offset, range->bytes);
      if (at < range->bytes) {
        return "file byte " + std::to_string(start + at) + ": " +
               std::to_string(image[start + at]) + ", expected " +
               std::to_string(pattern_byte(range->file_offset + static_cast<std::int64_t>(at)));
      }
      position = start + range->bytes;
    }
    return "";
  }

 private:
  struct Range {
    std::int64_t file_offset;
    std::size_t first_piece;
    std::size_t piece_count;
    std::size_t bytes;
  };
  struct Piece {
    std::size_t memory_offset;
    std::size_t length;
  };

  void build() {
    if (built_) return;
    memory_.assign(memory_size_, untouched);
    iovecs_.clear();
    for (const Piece& piece : pieces_) {
      iovecs_.push_back({memory_.data() + piece.memory_offset, piece.length});
    }
    requests_.clear();
    for (const Range& range : ranges_) {
      requests_.push_back(
          {range.file_offset,
           std::span<const iovec>(iovecs_).subspan(range.first_piece, range.piece_count),
           range.bytes});
    }
    built_ = true;
  }

  std::vector<Range> ranges_;
  std::vector<Piece> pieces_;
  std::size_t memory_size_ = 0;
  std::vector<unsigned char> memory_;
  std::vector<iovec> iovecs_;
  std::vector<IoRequest> requests_;
  bool built_ = false;
};

// Writes the set's pattern through `backend` and checks the file, then reads
// it back into untouched memory and checks every byte and count.
inline void write_then_read_back(StorageBackend& backend, ScratchFile& file, RequestSet& set) {
  set.fill_with_pattern();
  backend.write(file.fd(), set.requests());
  CHECK(set.check_file(file.fd()) == "");
  set.fill_untouched();
  std::vector<std::size_t> bytes_read(set.size(), 0);
  backend.read(file.fd(), set.requests(), bytes_read);
  CHECK(set.check_read(bytes_read, file.descriptor().size()) == "");
}

// Runs `body(StorageBackend&)` over the POSIX backend and, where this kernel
// allows it, the io_uring backend; failures name the backend.
template <class Body>
void for_each_backend(Body&& body) {
  {
    PosixBackend posix;
    INFO("backend: posix");
    body(static_cast<StorageBackend&>(posix));
  }
  if (!UringBackend::available()) {
    flowio::testing::skip_part("io_uring backend", "this kernel refuses io_uring rings");
    return;
  }
  UringBackend uring;
  INFO("backend: io_uring");
  body(static_cast<StorageBackend&>(uring));
}

// For each backend (for_each_backend): the requests `make_set()` returns,
// written to a fresh scratch file `name`-<backend> and read back
// (write_then_read_back).
template <class MakeSet>
void round_trip_on_each_backend(const std::string& name, MakeSet&& make_set) {
  for_each_backend([&](StorageBackend& backend) {
    ScratchFile file(name + "-" + backend.name());
    RequestSet set = make_set();
    write_then_read_back(backend, file, set);
  });
}

}  // namespace flowio::io::testing
