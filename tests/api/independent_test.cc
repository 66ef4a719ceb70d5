// Independent access on 1, 2 and 4 ranks: concurrent writers of interleaved
// 8-byte regions (stored through a mapping of the file where the file
// system allows, else one request per region) never lose each other's
// bytes nor change the bytes between the regions; reads by every method
// return what was written and stop at end of file; small nonblocking
// calls are done when they return.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "io/file_mapping.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

constexpr int kRegion = 8;
constexpr int kGap = 24;         // background bytes after each group of regions
constexpr int kRegions = 16384;  // 128 KiB per rank: nonblocking ones go to the I/O thread

using flowio::testing::world_rank;
using flowio::testing::world_size;

std::int64_t period() { return static_cast<std::int64_t>(world_size()) * kRegion + kGap; }

// What the file holds where nobody writes.
unsigned char background(std::int64_t offset) {
  return static_cast<unsigned char>(offset * 11 + offset / 251 + 3);
}

// What `rank` writes in `round` as its `index`-th byte.
unsigned char written(int rank, int round, std::int64_t index) {
  return static_cast<unsigned char>(rank * 67 + round * 13 + index * 5 + 1);
}

// Rank r's regions: region k at k * period() + r * kRegion (the
// displacement), described as a vector resized to tile.
MPI_Datatype interleaved_regions() {
  MPI_Datatype vector, resized;
  MPI_Type_vector(kRegions, kRegion, static_cast<int>(period()), MPI_BYTE, &vector);
  MPI_Type_create_resized(vector, 0, kRegions * period(), &resized);
  MPI_Type_commit(&resized);
  MPI_Type_free(&vector);
  return resized;
}

std::int64_t extent_bytes() { return kRegions * period(); }

// Rank 0 fills the file with the background, longer than the access.
void write_background(const std::string& path) {
  if (world_rank() == 0) {
    std::vector<unsigned char> bytes(static_cast<std::size_t>(extent_bytes() + 4096));
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = background(static_cast<std::int64_t>(i));
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Rank 0 checks the file: each rank's regions hold its bytes of `round`,
// everything else the background. Returns the first wrong offset, or -1.
std::int64_t first_wrong_byte(const std::string& path, int round) {
  std::int64_t wrong = -1;
  if (world_rank() == 0) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::int64_t offset = 0; offset < static_cast<std::int64_t>(bytes.size()); ++offset) {
      const std::int64_t in_period = offset % period();
      const std::int64_t k = offset / period();
      unsigned char expected = background(offset);
      if (k < kRegions && in_period < world_size() * kRegion) {
        const int owner = static_cast<int>(in_period / kRegion);
        expected = written(owner, round, k * kRegion + in_period % kRegion);
      }
      if (static_cast<unsigned char>(bytes[static_cast<std::size_t>(offset)]) != expected) {
        wrong = offset;
        break;
      }
    }
  }
  MPI_Bcast(&wrong, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  return wrong;
}

// Whether this process holds a mapping of `path` (/proc/self/maps names
// files by their resolved path).
bool mapped_by_this_process(const std::string& unresolved) {
  char resolved[PATH_MAX];
  REQUIRE(::realpath(unresolved.c_str(), resolved) != nullptr);
  const std::string path = resolved;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() >= path.size() &&
        line.compare(line.size() - path.size(), path.size(), path) == 0) {
      return true;
    }
  }
  return false;
}

bool file_system_allows_mapped_stores(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  const bool allows = fd >= 0 && flowio::io::coherent_for_mapped_stores(fd);
  if (fd >= 0) ::close(fd);
  return allows;
}

// Every rank writes its regions `rounds` times, all ranks at once with no
// synchronization between rounds, half blocking, half nonblocking.
void write_rounds(flowio::File& file, int rounds) {
  const int rank = world_rank();
  std::vector<unsigned char> data(kRegions * kRegion);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      data[i] = written(rank, round, static_cast<std::int64_t>(i));
    }
    if (round % 2 == 0) {
      CHECK(file.write_at(0, data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE) ==
            data.size());
    } else {
      CHECK(file.iwrite_at(0, data.data(), static_cast<MPI_Count>(data.size()), MPI_BYTE).get() ==
            data.size());
    }
  }
}

}  // namespace

// Concurrent independent writers of interleaved 8-byte regions, with the
// methods the hints allow: what each wrote last is there, and no byte
// between the regions changed. With the default hints on a file system
// that keeps one page cache, the stores went through a mapping.
TEST_CASE("Api.Independent.InterleavedWritersKeepEachOthersBytes") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "independent_writers");
  MPI_Datatype filetype = interleaved_regions();
  constexpr int kRounds = 12;
  struct Variant {
    const char* name;
    flowio::Mode mode;
    flowio::Hints hints;
  };
  const Variant variants[] = {
      {"defaults", flowio::Mode::rdwr, {}},
      {"no sieving", flowio::Mode::rdwr, {{"romio_ds_write", "disable"}}},
      {"no mapping", flowio::Mode::rdwr, {{"flowio_ds_mapping", "disable"}}},
      {"write-only", flowio::Mode::wronly, {}},
  };
  for (const Variant& variant : variants) {
    INFO("variant: " << std::string(variant.name));
    write_background(path);
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, variant.mode, variant.hints);
    file.set_view(world_rank() * kRegion, MPI_BYTE, filetype);
    write_rounds(file, kRounds);
    if (std::string(variant.name) == "defaults" && file_system_allows_mapped_stores(path)) {
      CHECK(mapped_by_this_process(path));
    }
    file.close();
    CHECK(first_wrong_byte(path, kRounds - 1) == -1);
  }
  MPI_Type_free(&filetype);
  if (world_rank() == 0) ::unlink(path.c_str());
}

// Reads of the interleaved regions by every method (sieved, through the
// kept mapping, one request per region) return what was written; a read
// across end of file returns the bytes before it and leaves the rest of
// the memory untouched.
TEST_CASE("Api.Independent.ReadsByEveryMethod") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "independent_reads");
  MPI_Datatype filetype = interleaved_regions();
  write_background(path);
  {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdwr);
    file.set_view(world_rank() * kRegion, MPI_BYTE, filetype);
    write_rounds(file, 1);
    file.close();
  }
  const flowio::Hints settings[] = {
      {},
      {{"romio_ds_read", "enable"}, {"flowio_ds_mapping", "disable"}},
      {{"romio_ds_read", "disable"}},
      {{"flowio_ds_threshold", "0"}, {"flowio_ds_mapping", "disable"}},
  };
  const int rank = world_rank();
  for (const flowio::Hints& hints : settings) {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly, hints);
    file.set_view(rank * kRegion, MPI_BYTE, filetype);
    std::vector<unsigned char> back(kRegions * kRegion, 0);
    CHECK(file.read_at(0, back.data(), static_cast<MPI_Count>(back.size()), MPI_BYTE) ==
          back.size());
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < back.size(); ++i) {
      if (back[i] != written(rank, 0, static_cast<std::int64_t>(i))) ++mismatches;
    }
    CHECK(mismatches == 0);
    // The second tile of the view starts after the file's end (the file is
    // one extent plus 4096 background bytes): of a read from the last 100
    // regions on, only those regions and what of the second tile lies
    // before the end come back.
    std::vector<unsigned char> tail(200 * kRegion, 0x5a);
    const std::size_t got = file.read_at((kRegions - 100) * kRegion, tail.data(),
                                         static_cast<MPI_Count>(tail.size()), MPI_BYTE);
    const std::int64_t file_size = extent_bytes() + 4096;
    std::int64_t expected = 100 * kRegion;
    for (int k = 0; k < 100; ++k) {
      const std::int64_t begin = extent_bytes() + k * period() + rank * kRegion;
      expected += std::clamp<std::int64_t>(file_size - begin, 0, kRegion);
    }
    CHECK(got == static_cast<std::size_t>(expected));
    for (std::size_t i = got; i < tail.size(); ++i) {
      if (tail[i] != 0x5a) FAIL("memory past end of file changed at " << i);
    }
    file.close();
  }
  MPI_Type_free(&filetype);
  if (world_rank() == 0) ::unlink(path.c_str());
}

// A nonblocking access of 4 KiB is done when the call returns; a 1 MiB one
// completes on flowio's I/O thread; both move the right bytes.
TEST_CASE("Api.Independent.SmallNonblockingDoneAtTheCall") {
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "independent_small");
  const int rank = world_rank();
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  std::vector<unsigned char> small(4096), large(1 << 20);
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = written(rank, 1, i);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = written(rank, 2, i);
  const MPI_Offset small_at = rank * 4096;
  const MPI_Offset large_at = world_size() * 4096 + rank * (1 << 20);
  flowio::Future<std::size_t> small_write = file.iwrite_at(small_at, small.data(), 4096, MPI_BYTE);
  CHECK(small_write.ready());
  flowio::Future<std::size_t> large_write =
      file.iwrite_at(large_at, large.data(), static_cast<MPI_Count>(large.size()), MPI_BYTE);
  CHECK(small_write.get() == 4096);
  CHECK(large_write.get() == large.size());
  std::vector<unsigned char> small_back(4096), large_back(large.size());
  flowio::Future<std::size_t> small_read =
      file.iread_at(small_at, small_back.data(), 4096, MPI_BYTE);
  CHECK(small_read.ready());
  CHECK(small_read.get() == 4096);
  CHECK(file.iread_at(large_at, large_back.data(), static_cast<MPI_Count>(large.size()), MPI_BYTE)
            .get() == large.size());
  CHECK(small_back == small);
  CHECK(large_back == large);
  file.close();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) ::unlink(path.c_str());
}
