// Files of many GiB of which a test touched a few MiB: their data extents
// (SEEK_DATA / SEEK_HOLE) and a byte-for-byte comparison of two of them
// that reads only where either holds data (holes read as zeros).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace flowio::testing {

struct Extent {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// The data extents of the open file `fd`, in order (the file system's
// allocation: at least every byte ever written, maybe more).
inline std::vector<Extent> data_extents(int fd) {
  std::vector<Extent> extents;
  off_t at = 0;
  while (true) {
    const off_t begin = ::lseek(fd, at, SEEK_DATA);
    if (begin < 0) break;  // ENXIO: no data past `at`
    const off_t end = ::lseek(fd, begin, SEEK_HOLE);
    extents.push_back({begin, end});
    at = end;
  }
  return extents;
}

// The union of two sorted extent lists.
inline std::vector<Extent> merged(std::vector<Extent> a, const std::vector<Extent>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end(), [](const Extent& x, const Extent& y) { return x.begin < y.begin; });
  std::vector<Extent> out;
  for (const Extent& e : a) {
    if (!out.empty() && e.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, e.end);
    } else {
      out.push_back(e);
    }
  }
  return out;
}

// Whether the files at `left` and `right` hold the same bytes; otherwise
// `why` says where they first differ.
inline bool same_sparse_files(const std::string& left, const std::string& right, std::string& why) {
  const int a = ::open(left.c_str(), O_RDONLY);
  const int b = ::open(right.c_str(), O_RDONLY);
  bool same = a >= 0 && b >= 0;
  struct stat sa {
  }, sb{};
  if (same) {
    ::fstat(a, &sa);
    ::fstat(b, &sb);
    same = sa.st_size == sb.st_size;
    if (!same) {
      why = "sizes " + std::to_string(sa.st_size) + " and " + std::to_string(sb.st_size);
    }
  } else {
    why = "cannot open both files";
  }
  if (same) {
    constexpr std::int64_t kChunk = 1 << 20;
    std::vector<char> x(kChunk), y(kChunk);
    for (const Extent& e : merged(data_extents(a), data_extents(b))) {
      for (std::int64_t at = e.begin; same && at < e.end; at += kChunk) {
        const auto n = static_cast<std::size_t>(std::min(kChunk, e.end - at));
        std::memset(x.data(), 0, n);
        std::memset(y.data(), 0, n);
        const ssize_t got_x = ::pread(a, x.data(), n, at);
        const ssize_t got_y = ::pread(b, y.data(), n, at);
        if (got_x < 0 || got_y < 0) {
          why = "cannot read at " + std::to_string(at);
          same = false;
        } else if (std::memcmp(x.data(), y.data(), n) != 0) {
          std::size_t i = 0;
          while (x[i] == y[i]) ++i;
          why = "byte " + std::to_string(at + static_cast<std::int64_t>(i)) + " differs";
          same = false;
        }
      }
      if (!same) break;
    }
  }
  if (a >= 0) ::close(a);
  if (b >= 0) ::close(b);
  return same;
}

// The bytes of the file at `path` as a compact string that two files share
// exactly when they hold the same bytes: the size, then each 4 KiB block
// holding a nonzero byte, with its offset. Reads only the data extents, so
// a file of many GiB costs what was written to it. Empty if unreadable.
inline std::string nonzero_blocks(const std::string& path) {
  constexpr std::int64_t kBlock = 4096;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return {};
  struct stat info {};
  ::fstat(fd, &info);
  std::string out(reinterpret_cast<const char*>(&info.st_size), sizeof info.st_size);
  std::vector<char> block(kBlock);
  std::int64_t next = 0;  // extents can share a block: each block once
  for (const Extent& e : data_extents(fd)) {
    for (std::int64_t at = std::max(next, e.begin / kBlock * kBlock); at < e.end; at += kBlock) {
      const auto n = static_cast<std::size_t>(std::min<std::int64_t>(kBlock, info.st_size - at));
      if (::pread(fd, block.data(), n, at) != static_cast<ssize_t>(n)) {
        ::close(fd);
        return {};
      }
      next = at + kBlock;
      if (std::all_of(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(n),
                      [](char byte) { return byte == 0; }))
        continue;
      out.append(reinterpret_cast<const char*>(&at), sizeof at);
      out.append(block.data(), n);
    }
  }
  ::close(fd);
  return out;
}

// Bytes the file at `path` occupies on storage.
inline std::int64_t allocated_bytes(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return -1;
  return static_cast<std::int64_t>(info.st_blocks) * 512;
}

}  // namespace flowio::testing
