// io::FileMapping and coherent_for_mapped_stores: stores change exactly the
// bytes of their pieces (also past end of file, which they extend), loads
// stop at end of file, the kept mapping follows the accesses, and the
// method is refused where a descriptor cannot serve it.
#include "io/file_mapping.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io_test_support.h"

namespace {

using flowio::io::FileMapping;
using flowio::io::WindowPiece;
using flowio::io::testing::ScratchFile;

std::vector<unsigned char> read_all(int fd) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)));
  REQUIRE(::pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  return bytes;
}

// `count` pieces of `length` bytes, `stride` apart from `first`, whose data
// are `memory` (filled with bytes derived from `seed`).
std::vector<WindowPiece> strided_pieces(std::int64_t first, std::int64_t length,
                                        std::int64_t stride, int count,
                                        std::vector<unsigned char>& memory, int seed) {
  memory.resize(static_cast<std::size_t>(length * count));
  for (std::size_t i = 0; i < memory.size(); ++i) {
    memory[i] = static_cast<unsigned char>(seed * 31 + i * 13 + 1);
  }
  std::vector<WindowPiece> pieces;
  for (int k = 0; k < count; ++k) {
    pieces.push_back(WindowPiece{first + k * stride, length,
                                 reinterpret_cast<char*>(memory.data() + k * length)});
  }
  return pieces;
}

}  // namespace

// Stores into a file full of the pattern: the pieces hold their data, every
// other byte keeps the pattern, and a store past end of file extends the
// file to the end of its last piece (the gap before reads as zeros).
TEST_CASE("Io.FileMapping.StoresChangeOnlyThePieces") {
  ScratchFile file("mapping_store");
  flowio::io::testing::write_pattern_file(file.fd(), 100000);
  FileMapping mapping(file.fd());
  std::vector<unsigned char> data;
  const auto pieces = strided_pieces(1000, 8, 136, 500, data, 1);
  REQUIRE(mapping.store(pieces));
  std::vector<unsigned char> past_data;
  const auto past = strided_pieces(150000, 5, 100, 10, past_data, 2);
  REQUIRE(mapping.store(past));

  const std::vector<unsigned char> bytes = read_all(file.fd());
  REQUIRE(bytes.size() == 150000 + 9 * 100 + 5);
  std::vector<bool> written(bytes.size(), false);
  for (const auto& list : {pieces, past}) {
    for (const WindowPiece& piece : list) {
      for (std::int64_t i = 0; i < piece.length; ++i) {
        CHECK(bytes[static_cast<std::size_t>(piece.offset + i)] ==
              static_cast<unsigned char>(piece.data[i]));
        written[static_cast<std::size_t>(piece.offset + i)] = true;
      }
    }
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (written[i]) continue;
    const unsigned char expected =
        i < 100000 ? flowio::io::testing::pattern_byte(static_cast<std::int64_t>(i)) : 0;
    if (bytes[i] != expected) FAIL("byte " << i << " outside the pieces changed");
  }
}

// Loads copy what lies before end of file: the piece across it is cut, the
// pieces after it and their memory are left alone, and the count is the
// bytes before end of file.
TEST_CASE("Io.FileMapping.LoadsStopAtEndOfFile") {
  ScratchFile file("mapping_load");
  flowio::io::testing::write_pattern_file(file.fd(), 10000);
  FileMapping mapping(file.fd());
  std::vector<unsigned char> memory(3 * 100, flowio::io::testing::untouched);
  const std::vector<WindowPiece> pieces = {
      {9000, 100, reinterpret_cast<char*>(memory.data())},
      {9950, 100, reinterpret_cast<char*>(memory.data() + 100)},
      {10500, 100, reinterpret_cast<char*>(memory.data() + 200)},
  };
  const std::optional<std::int64_t> loaded = mapping.load(pieces);
  REQUIRE(loaded.has_value());
  CHECK(*loaded == 150);
  CHECK(flowio::io::testing::first_pattern_mismatch(memory.data(), 9000, 100) == 100);
  CHECK(flowio::io::testing::first_pattern_mismatch(memory.data() + 100, 9950, 50) == 50);
  CHECK(flowio::io::testing::first_not_equal(memory.data() + 150, 150,
                                             flowio::io::testing::untouched) == 150);
}

// Accesses far apart move the kept mapping; near ones extend it; every
// store and load sees the file as plain reads and writes do, also after
// the file changed through write(2).
TEST_CASE("Io.FileMapping.KeptMappingFollowsTheAccesses") {
  ScratchFile file("mapping_kept");
  FileMapping mapping(file.fd());
  const std::int64_t places[] = {0, std::int64_t{3} << 30, 4096, std::int64_t{5} << 20, 0};
  int seed = 0;
  for (const std::int64_t place : places) {
    std::vector<unsigned char> data;
    const auto pieces = strided_pieces(place + 10, 16, 64, 64, data, ++seed);
    REQUIRE(mapping.store(pieces));
    for (const WindowPiece& piece : pieces) {
      std::vector<unsigned char> back(16);
      REQUIRE(::pread(file.fd(), back.data(), 16, piece.offset) == 16);
      CHECK(std::equal(back.begin(), back.end(), reinterpret_cast<unsigned char*>(piece.data)));
    }
    // A write(2) after the store is what the next load finds.
    const unsigned char marker[4] = {0xde, 0xad, 0xbe, 0xef};
    REQUIRE(::pwrite(file.fd(), marker, 4, pieces[3].offset) == 4);
    std::vector<unsigned char> loaded(4, 0);
    const std::vector<WindowPiece> one = {
        {pieces[3].offset, 4, reinterpret_cast<char*>(loaded.data())}};
    REQUIRE(mapping.load(one) == std::optional<std::int64_t>(4));
    CHECK(std::equal(loaded.begin(), loaded.end(), marker));
  }
  mapping.forget();
}

// A write-only descriptor cannot back a shared writable mapping: store()
// refuses, changing nothing, and load() too (the caller then uses other
// methods); the predicate says no for it and for a non-regular file.
TEST_CASE("Io.FileMapping.RefusedWhereTheDescriptorCannotServe") {
  ScratchFile file("mapping_refused");
  flowio::io::testing::write_pattern_file(file.fd(), 8192);
  const int write_only = ::open(file.path().c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(write_only >= 0);
  CHECK_FALSE(flowio::io::coherent_for_mapped_stores(write_only));
  {
    FileMapping mapping(write_only);
    std::vector<unsigned char> data;
    CHECK_FALSE(mapping.store(strided_pieces(0, 8, 32, 10, data, 3)));
    std::vector<unsigned char> memory(8);
    const std::vector<WindowPiece> one = {{0, 8, reinterpret_cast<char*>(memory.data())}};
    CHECK_FALSE(mapping.load(one).has_value());
  }
  ::close(write_only);
  CHECK(flowio::io::testing::first_pattern_mismatch(read_all(file.fd()).data(), 0, 8192) == 8192);

  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  CHECK_FALSE(flowio::io::coherent_for_mapped_stores(pipe_ends[0]));
  ::close(pipe_ends[0]);
  ::close(pipe_ends[1]);
}

// tmpfs keeps one page cache per file for all processes: a read-write
// descriptor there qualifies (memfd_create makes a tmpfs file anywhere).
TEST_CASE("Io.FileMapping.TmpfsQualifies") {
  const int fd = ::memfd_create("flowio-mapping-test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(flowio::io::coherent_for_mapped_stores(fd));
  ::close(fd);
}
