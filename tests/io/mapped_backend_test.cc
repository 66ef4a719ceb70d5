// io::MappedBackend: rewrites of ranges accessed before, and reads inside
// the file, go through the kept mapping (the backend beneath sees no call)
// and writes change exactly their bytes; first writes, ranges past the
// size seen, other descriptors and large calls go beneath; a file shrunk under the mapping
// (by another descriptor) is written again correctly and read short.
#include "io/mapped_backend.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "io/file_mapping.h"
#include "io/posix_backend.h"
#include "io_test_support.h"

namespace flowio::io::testing {
namespace {

// The POSIX backend, counting the calls that reach it.
class CountingBackend : public StorageBackend {
 public:
  CountingBackend(int& writes, int& reads) : writes_(writes), reads_(reads) {}
  const char* name() const noexcept override { return "counting"; }
  void write(int fd, std::span<const IoRequest> requests) override {
    ++writes_;
    posix_.write(fd, requests);
  }
  void read(int fd, std::span<const IoRequest> requests,
            std::span<std::size_t> bytes_read) override {
    ++reads_;
    posix_.read(fd, requests, bytes_read);
  }

 private:
  PosixBackend posix_;
  int& writes_;
  int& reads_;
};

// A file, its mapping, and the mapped backend over a counting one.
struct Fixture {
  explicit Fixture(const std::string& name) : file(name), mapping(file.fd()) {
    backend = std::make_unique<MappedBackend>(std::make_unique<CountingBackend>(writes, reads));
    backend->attach(&mapping);
  }

  // Writes `length` bytes of `value` at `offset` through the backend.
  void write(std::int64_t offset, std::size_t length, unsigned char value) {
    std::vector<unsigned char> data(length, value);
    iovec memory{data.data(), length};
    const IoRequest request{offset, std::span<const iovec>(&memory, 1), length};
    backend->write(file.fd(), std::span<const IoRequest>(&request, 1));
  }

  // Reads [offset, offset + length) through the backend; returns the
  // bytes read, `untouched` past them.
  std::vector<unsigned char> read(std::int64_t offset, std::size_t length, std::size_t& got) {
    std::vector<unsigned char> data(length, untouched);
    iovec memory{data.data(), length};
    const IoRequest request{offset, std::span<const iovec>(&memory, 1), length};
    backend->read(file.fd(), std::span<const IoRequest>(&request, 1),
                  std::span<std::size_t>(&got, 1));
    return data;
  }

  ScratchFile file;
  FileMapping mapping;
  int writes = 0;
  int reads = 0;
  std::unique_ptr<MappedBackend> backend;
};

std::vector<unsigned char> file_bytes(int fd) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)));
  REQUIRE(::pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  return bytes;
}

// The bytes of [begin, end) of `bytes` that are not `value` (0 when all are).
std::size_t count_not(const std::vector<unsigned char>& bytes, std::size_t begin, std::size_t end,
                      unsigned char value) {
  std::size_t wrong = 0;
  for (std::size_t i = begin; i < end; ++i) wrong += bytes[i] != value ? 1 : 0;
  return wrong;
}

}  // namespace

// The first write goes beneath; rewrites and reads of the range do not,
// and land in the file (seen by pread) with every other byte kept.
TEST_CASE("Io.MappedBackend.RewritesAndReReadsSkipTheSystemCall") {
  Fixture f("mapped_rewrite");
  write_pattern_file(f.file.fd(), 65536);
  f.write(1000, 32768, 1);
  CHECK(f.writes == 1);
  for (unsigned char round = 2; round < 10; ++round) f.write(1000, 32768, round);
  CHECK(f.writes == 1);
  const auto bytes = file_bytes(f.file.fd());
  REQUIRE(bytes.size() == 65536);
  CHECK(count_not(bytes, 1000, 33768, 9) == 0);
  CHECK(first_pattern_mismatch(bytes.data(), 0, 1000) == 1000);
  CHECK(first_pattern_mismatch(bytes.data() + 33768, 33768, 65536 - 33768) == 65536 - 33768);
  std::size_t got = 0;
  const auto read = f.read(2000, 4096, got);
  CHECK(got == 4096);
  CHECK(count_not(read, 0, 4096, 9) == 0);
  CHECK(f.reads == 0);
}

// Another writer's bytes next to the range (in the same pages, written
// through another descriptor between the rewrites) stay as it wrote them.
TEST_CASE("Io.MappedBackend.NeighbourBytesStay") {
  Fixture f("mapped_neighbours");
  write_pattern_file(f.file.fd(), 16384);
  const FileDescriptor other = FileDescriptor::open(f.file.path(), O_RDWR, 0);
  f.write(1000, 100, 1);
  for (unsigned char round = 2; round < 20; ++round) {
    const std::vector<unsigned char> neighbour(100, static_cast<unsigned char>(100 + round));
    REQUIRE(::pwrite(other.get(), neighbour.data(), 100, 900) == 100);
    REQUIRE(::pwrite(other.get(), neighbour.data(), 100, 1100) == 100);
    f.write(1000, 100, round);
    const auto bytes = file_bytes(f.file.fd());
    CHECK(count_not(bytes, 900, 1000, static_cast<unsigned char>(100 + round)) == 0);
    CHECK(count_not(bytes, 1000, 1100, round) == 0);
    CHECK(count_not(bytes, 1100, 1200, static_cast<unsigned char>(100 + round)) == 0);
  }
  CHECK(f.writes == 1);
}

// Truncated to nothing by another descriptor: the rewrite's page lies past
// the end (SIGBUS, caught), the range goes beneath and the file is as a
// pwrite leaves it; a re-read past the new end is short, not stale. After
// forget_size(), a range past a cut inside a page goes beneath at once.
TEST_CASE("Io.MappedBackend.FileShrinkingUnderTheMapping") {
  Fixture f("mapped_shrink");
  const FileDescriptor other = FileDescriptor::open(f.file.path(), O_RDWR, 0);
  f.write(0, 16384, 1);
  f.write(0, 16384, 2);
  REQUIRE(f.writes == 1);
  std::size_t got = 0;
  f.read(0, 16384, got);
  REQUIRE(f.reads == 0);

  REQUIRE(::ftruncate(other.get(), 0) == 0);
  f.read(0, 16384, got);
  CHECK(got == 0);
  CHECK(f.reads == 1);
  f.write(4096, 8192, 3);
  CHECK(f.writes == 2);
  auto bytes = file_bytes(f.file.fd());
  REQUIRE(bytes.size() == 12288);
  CHECK(count_not(bytes, 0, 4096, 0) == 0);
  CHECK(count_not(bytes, 4096, 12288, 3) == 0);

  f.write(4096, 8192, 4);
  CHECK(f.writes == 2);
  REQUIRE(::ftruncate(other.get(), 5000) == 0);
  f.mapping.forget_size();
  f.write(4096, 8192, 5);
  CHECK(f.writes == 3);
  bytes = file_bytes(f.file.fd());
  REQUIRE(bytes.size() == 12288);
  CHECK(count_not(bytes, 4096, 12288, 5) == 0);
}

// Beneath: a first access, a range past the size seen, another
// descriptor, a write above kMappedWriteAtMostBytes, a backend not
// attached. A rewrite of a range accessed before, larger than first reads
// may be, goes through the mapping, and so does the read after it (its
// pages are mapped now).
TEST_CASE("Io.MappedBackend.ServesOnlyWhatItMay") {
  Fixture f("mapped_refusals");
  f.write(0, 4096, 1);
  CHECK(f.writes == 1);
  f.write(4096, 4096, 1);  // accessed before? no: past the size seen
  CHECK(f.writes == 2);
  f.write(0, 8192, 2);
  CHECK(f.writes == 2);

  ScratchFile second("mapped_second");
  {
    std::vector<unsigned char> data(4096, 7);
    iovec memory{data.data(), data.size()};
    const IoRequest request{0, std::span<const iovec>(&memory, 1), data.size()};
    f.backend->write(second.fd(), std::span<const IoRequest>(&request, 1));
    f.backend->write(second.fd(), std::span<const IoRequest>(&request, 1));
  }
  CHECK(f.writes == 4);

  const auto large = static_cast<std::size_t>(kMappedWriteAtMostBytes + 4096);
  f.write(0, large, 3);
  f.write(0, large, 4);
  CHECK(f.writes == 6);

  // Calls beneath teach the mapping their ranges only when it may serve
  // them at all: the first write of this size goes beneath, the rewrite not.
  const auto rewrite = static_cast<std::size_t>(kMappedReadAtMostBytes * 2);
  f.write(0, rewrite, 5);
  CHECK(f.writes == 7);
  f.write(0, rewrite, 6);
  CHECK(f.writes == 7);
  std::size_t got = 0;
  const auto read_back = f.read(0, rewrite, got);
  CHECK(f.reads == 0);
  CHECK(got == rewrite);
  CHECK(count_not(read_back, 0, rewrite, 6) == 0);
  f.write(0, rewrite, 4);

  f.backend->attach(nullptr);
  f.write(0, 4096, 5);
  CHECK(f.writes == 8);
  const auto bytes = file_bytes(f.file.fd());
  CHECK(count_not(bytes, 0, 4096, 5) == 0);
  CHECK(count_not(bytes, 4096, large, 4) == 0);
}

// Reads above kMappedReadAtMostBytes go through the mapping only where
// every page was moved through the kept mapping since it was made: not
// pages a pread brought in, not after a remap or forget(), never above
// kMappedRereadAtMostBytes.
TEST_CASE("Io.MappedBackend.LargeReadsOnlyOfMappedPages") {
  Fixture f("mapped_large_reads");
  const auto size = static_cast<std::size_t>(kMappedRereadAtMostBytes + (1 << 20));
  write_pattern_file(f.file.fd(), static_cast<std::int64_t>(size));
  const auto large = static_cast<std::size_t>(kMappedReadAtMostBytes * 2);
  std::size_t got = 0;
  const auto check_read = [&](std::int64_t offset, std::size_t length, int reads_beneath) {
    const auto data = f.read(offset, length, got);
    CHECK(got == length);
    CHECK(first_pattern_mismatch(data.data(), offset, static_cast<std::int64_t>(length)) == length);
    CHECK(f.reads == reads_beneath);
  };
  check_read(0, large, 1);  // nothing mapped yet
  check_read(0, large, 2);  // a pread maps nothing
  check_read(0, large / 4, 2);
  check_read(0, large, 3);  // only its first quarter is mapped
  f.write(0, large, 9);     // a rewrite: accessed before, now all mapped
  CHECK(f.writes == 0);
  f.read(0, large, got);
  CHECK(f.reads == 3);
  f.write(0, large, 8);
  f.mapping.forget();
  f.read(0, large, got);
  CHECK(f.reads == 4);
  // Both halves rewritten: the first time beneath, the second through a
  // mapping extended for the second half (which drops the pages mapped
  // for the first), the third through that mapping, all mapped. A read
  // of one half goes through it, a read of both is too large.
  const std::size_t half = size / 2;
  for (int time = 0; time < 3; ++time) {
    f.write(0, half, 7);
    f.write(static_cast<std::int64_t>(half), size - half, 7);
  }
  f.read(0, half, got);
  CHECK(f.reads == 4);
  const auto all = f.read(0, size, got);
  CHECK(f.reads == 5);
  CHECK(got == size);
  CHECK(count_not(all, 0, size, 7) == 0);
}

// A call's pieces far apart (a checkpoint's variables: one block each, a
// quarter of the file apart) are all remembered as accessed, and the
// mapping grows to cover them all: their rewrites go through it, every
// time, without a call beneath.
TEST_CASE("Io.MappedBackend.RewritesOfSeveralFarPlaces") {
  Fixture f("mapped_far_places");
  constexpr int kPlaces = 4;
  constexpr std::int64_t kApart = std::int64_t{48} << 20;
  constexpr std::size_t kLength = std::size_t{1} << 20;
  for (int time = 0; time < 3; ++time) {
    for (int place = 0; place < kPlaces; ++place) {
      f.write(place * kApart, kLength, static_cast<unsigned char>(10 * time + place));
    }
    CHECK(f.writes == kPlaces);
  }
  for (int place = 0; place < kPlaces; ++place) {
    CAPTURE(place);
    std::vector<unsigned char> back(kLength);
    REQUIRE(::pread(f.file.fd(), back.data(), kLength, place * kApart) ==
            static_cast<ssize_t>(kLength));
    CHECK(count_not(back, 0, kLength, static_cast<unsigned char>(20 + place)) == 0);
  }
}

// A first read of bytes another descriptor wrote goes through the mapping
// (after one look at the file's size) and returns them.
TEST_CASE("Io.MappedBackend.FirstReadsInsideTheFile") {
  Fixture f("mapped_first_read");
  write_pattern_file(f.file.fd(), 100000);
  std::size_t got = 0;
  const auto data = f.read(5000, 60000, got);
  CHECK(got == 60000);
  CHECK(first_pattern_mismatch(data.data(), 5000, 60000) == 60000);
  const auto tail = f.read(99000, 2000, got);
  CHECK(got == 1000);
  CHECK(first_pattern_mismatch(tail.data(), 99000, 1000) == 1000);
  CHECK(count_not(tail, 1000, 2000, untouched) == 0);
  CHECK(f.reads == 1);
}

// Reads alternating between two parts of a file too far apart to be
// mapped together (3 GiB, sparse) do not remap at every call: the part
// mapped first keeps being served, the other goes beneath, until the
// calls move on to it.
TEST_CASE("Io.MappedBackend.FarApartReadsDoNotRemapEveryCall") {
  Fixture f("mapped_far_apart");
  constexpr std::int64_t kFar = std::int64_t{5} << 29;  // 2.5 GiB
  REQUIRE(::ftruncate(f.file.fd(), kFar + 4096) == 0);
  std::size_t got = 0;
  for (int round = 0; round < 10; ++round) {
    f.read(0, 4096, got);
    CHECK(got == 4096);
    f.read(kFar, 4096, got);
    CHECK(got == 4096);
  }
  CHECK(f.reads == 10);
  // Reads that moved on to the far part move the mapping there soon.
  for (int call = 0; call < 5; ++call) f.read(kFar, 4096, got);
  CHECK(f.reads == 11);
}

// A read past end of file (nothing read) or a request of no bytes does
// not make the range count as inside the file: asked again, it still goes
// beneath and still reads nothing.
TEST_CASE("Io.MappedBackend.ReadsPastEndTeachNothing") {
  Fixture f("mapped_past_end");
  f.write(0, 100, 1);
  std::size_t got = 1;
  f.read(0, 100, got);
  CHECK(got == 100);
  CHECK(f.reads == 0);
  std::vector<unsigned char> none;
  iovec empty{none.data(), 0};
  const IoRequest nothing{5000, std::span<const iovec>(&empty, 1), 0};
  f.backend->write(f.file.fd(), std::span<const IoRequest>(&nothing, 1));
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto data = f.read(200, 300, got);
    CHECK(got == 0);
    CHECK(count_not(data, 0, 300, untouched) == 0);
    const auto across = f.read(50, 4000, got);
    CHECK(got == 50);
    CHECK(count_not(across, 50, 4000, untouched) == 0);
  }
  CHECK(f.reads == 4);
}

// Several requests in one call (an aggregator's pieces) are served
// together, each at its place, memory gathered from several pieces.
TEST_CASE("Io.MappedBackend.SeveralRequestsAndPieces") {
  Fixture f("mapped_several");
  f.write(0, 20000, 0);
  std::vector<unsigned char> a(300, 1), b(700, 2), c(50, 3);
  const iovec first[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  const iovec second[1] = {{c.data(), c.size()}};
  const IoRequest requests[2] = {{100, std::span<const iovec>(first, 2), 1000},
                                 {15000, std::span<const iovec>(second, 1), 50}};
  f.backend->write(f.file.fd(), requests);
  CHECK(f.writes == 1);
  const auto bytes = file_bytes(f.file.fd());
  CHECK(count_not(bytes, 0, 100, 0) == 0);
  CHECK(count_not(bytes, 100, 400, 1) == 0);
  CHECK(count_not(bytes, 400, 1100, 2) == 0);
  CHECK(count_not(bytes, 1100, 15000, 0) == 0);
  CHECK(count_not(bytes, 15000, 15050, 3) == 0);
  CHECK(count_not(bytes, 15050, 20000, 0) == 0);
}

// A fill in place makes its bytes straight in the mapped pages of a range
// written before, and refuses a first access and a range past the size
// seen (the caller then writes).
TEST_CASE("Io.MappedBackend.FillsInPlace") {
  Fixture f("mapped_fill");
  const auto fill_with_index = [](void* context, char* to) {
    const std::size_t length = *static_cast<const std::size_t*>(context);
    for (std::size_t i = 0; i < length; ++i) to[i] = static_cast<char>(i % 251);
  };
  std::size_t length = 8192;
  CHECK_FALSE(f.backend->fill_in_place(f.file.fd(), 4096, 8192, fill_with_index, &length));
  f.write(0, 16384, 9);
  CHECK(f.writes == 1);
  CHECK(f.backend->fill_in_place(f.file.fd(), 4096, 8192, fill_with_index, &length));
  CHECK(f.writes == 1);
  const auto bytes = file_bytes(f.file.fd());
  REQUIRE(bytes.size() == 16384);
  CHECK(count_not(bytes, 0, 4096, 9) == 0);
  CHECK(count_not(bytes, 12288, 16384, 9) == 0);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < 8192; ++i) wrong += bytes[4096 + i] != i % 251 ? 1 : 0;
  CHECK(wrong == 0);
  CHECK_FALSE(f.backend->fill_in_place(f.file.fd(), 12288, 8192, fill_with_index, &length));
}

}  // namespace flowio::io::testing
