// Direct collective external32 writes and reads with noncontiguous memory
// (ncio's nc-c case: each rank accesses its own part of the file itself),
// which reverse the units of the data in the gather into the staging
// chunk, or in the scatter out of it (runtime/stages/direct_stage.cc,
// exchange/stream_pack.h). The file must hold the standard's encoding
// (MPI 4.1, 14.5.2: big-endian, complex types as two parts), encoded here
// independently of flowio, for every unit size, for parts of several
// staging chunks, for chunks that the window size cuts anywhere, and into
// holed views; the data must read back; and a read that meets end of file
// inside an element delivers the whole elements before it only.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/file_contents.h"
#include "tests/api/test_paths.h"
#include "tests/support/with_hint.h"
#include "tests/support/world.h"

namespace {

using namespace flowio::testing;
using Bytes = std::vector<unsigned char>;

// A predefined type whose external32 form reverses units of `unit` bytes,
// `unit * parts` bytes an element.
struct Element {
  MPI_Datatype type;
  const char* name;
  int unit;
  int parts;
};

const Element kElements[] = {
    {MPI_SHORT, "short", 2, 1},
    {MPI_FLOAT, "float", 4, 1},
    {MPI_INT, "int", 4, 1},
    {MPI_DOUBLE, "double", 8, 1},
    {MPI_C_FLOAT_COMPLEX, "c_float_complex", 4, 2},
    {MPI_C_DOUBLE_COMPLEX, "c_double_complex", 8, 2},
};

// Byte b of element i of rank r in memory: every byte different nearby,
// so a unit reversed wrongly, shifted or from another element shows.
unsigned char byte_of(int rank, std::int64_t i, int b) {
  return static_cast<unsigned char>((rank * 131 + i * 17 + b * 29 + (i >> 8)) & 0xFF);
}

// One case: each rank's `count` elements, `block` per block of memory
// `stride` elements apart; in the file, the rank's part at
// rank * part_bytes, contiguous or (when `file_gap` > 0) in blocks of
// `file_block` elements followed by `file_gap` bytes of hole.
struct Case {
  std::int64_t count = 0;
  int block = 1;
  int stride = 2;
  int file_block = 0;
  int file_gap = 0;
  flowio::Hints hints;
};

void check_case(const Element& element, const Case& c, const std::string& label) {
  const std::string name = std::string(element.name) + "_" + label;
  CAPTURE(name);
  const int rank = world_rank(), ranks = world_size();
  const int size = element.unit * element.parts;
  REQUIRE(c.count % c.block == 0);
  const std::int64_t blocks = c.count / c.block;
  Bytes memory(static_cast<std::size_t>(blocks * c.stride * size), 0xEE);
  for (std::int64_t i = 0; i < c.count; ++i) {
    const std::int64_t at = ((i / c.block) * c.stride + i % c.block) * size;
    for (int b = 0; b < size; ++b) memory[static_cast<std::size_t>(at + b)] = byte_of(rank, i, b);
  }
  MPI_Datatype memory_type, filetype = element.type;
  MPI_Type_vector(static_cast<int>(blocks), c.block, c.stride, element.type, &memory_type);
  MPI_Type_commit(&memory_type);
  // The file stream of one rank in its part: contiguous, or blocks and holes.
  const std::int64_t file_blocks = c.file_gap > 0 ? c.count / c.file_block : 0;
  const std::int64_t part_bytes =
      c.file_gap > 0 ? file_blocks * (c.file_block * size + c.file_gap) : c.count * size;
  if (c.file_gap > 0) {
    REQUIRE(c.count % c.file_block == 0);
    MPI_Datatype block_type;
    MPI_Type_contiguous(c.file_block, element.type, &block_type);
    MPI_Type_create_resized(block_type, 0, c.file_block * size + c.file_gap, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Type_free(&block_type);
  }
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_direct_" + name);
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, c.hints);
  file.set_view(rank * part_bytes, element.type, filetype, {}, "external32");
  // Two calls, the second from the middle of the stream.
  const std::int64_t first_blocks = blocks / 2 + 1;
  MPI_Datatype first_type, second_type;
  MPI_Type_vector(static_cast<int>(first_blocks), c.block, c.stride, element.type, &first_type);
  MPI_Type_vector(static_cast<int>(blocks - first_blocks), c.block, c.stride, element.type,
                  &second_type);
  MPI_Type_commit(&first_type);
  MPI_Type_commit(&second_type);
  const std::int64_t first_count = first_blocks * c.block;
  CHECK(file.write_at_all(0, memory.data(), 1, first_type) ==
        static_cast<std::size_t>(first_count * size));
  CHECK(file.statistics().back().method == "direct");
  CHECK(file.write_at_all(
            first_count, memory.data() + static_cast<std::size_t>(first_blocks * c.stride * size),
            1, second_type) == static_cast<std::size_t>((c.count - first_count) * size));
  CHECK(file.statistics().back().method == "direct");
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    // The file ends with the last rank's last block, not its hole.
    Bytes expected(static_cast<std::size_t>(ranks * part_bytes - c.file_gap), 0);
    for (int r = 0; r < ranks; ++r) {
      for (std::int64_t i = 0; i < c.count; ++i) {
        std::int64_t at = r * part_bytes + i * size;
        if (c.file_gap > 0)
          at = r * part_bytes + (i / c.file_block) * (c.file_block * size + c.file_gap) +
               (i % c.file_block) * size;
        for (int part = 0; part < element.parts; ++part) {
          for (int b = 0; b < element.unit; ++b) {
            expected[static_cast<std::size_t>(at + part * element.unit + b)] =
                byte_of(r, i, part * element.unit + element.unit - 1 - b);
          }
        }
      }
    }
    const Bytes got = read_whole_file<unsigned char>(path);
    REQUIRE(got.size() == expected.size());
    std::size_t first_difference = 0;
    while (first_difference < got.size() && got[first_difference] == expected[first_difference])
      ++first_difference;
    CHECK(first_difference == got.size());
  }
  Bytes back(memory.size(), 0xEE);
  CHECK(file.read_at_all(0, back.data(), 1, memory_type) ==
        static_cast<std::size_t>(c.count * size));
  CHECK(back == memory);
  file.close();
  for (MPI_Datatype* t : {&memory_type, &first_type, &second_type}) MPI_Type_free(t);
  if (c.file_gap > 0) MPI_Type_free(&filetype);
  MPI_Barrier(MPI_COMM_WORLD);
}

const flowio::Hints kDirect = {{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}};

}  // namespace

// Strided memory into each rank's contiguous part of the file, over more
// than two staging chunks (512 KiB), whatever the collective buffering
// hint (each rank's part is its own: direct either way).
TEST_CASE("Api.External32Direct.StridedMemoryContiguousFile") {
  for (const Element& element : kElements) {
    const int size = element.unit * element.parts;
    Case c;
    c.count = (1300 * 1024 / size) / 3 * 3;
    c.block = 3;
    c.stride = 5;
    c.hints = kDirect;
    check_case(element, c, "several_chunks");
    c.hints = {};
    c.count = 3 * 500;
    check_case(element, c, "automatic");
  }
}

// Windows of 1001 bytes cap the staging chunk: chunks are cut to whole
// units, and chunk boundaries fall inside memory blocks and inside
// complex elements.
TEST_CASE("Api.External32Direct.ChunksCutByWindowSize") {
  for (const Element& element : kElements) {
    Case c;
    c.count = 7 * 300;
    c.block = 7;
    c.stride = 9;
    c.hints = flowio::testing::with_hint(kDirect, "cb_buffer_size", "1001");
    check_case(element, c, "window_1001");
  }
}

// A holed view of the rank's own part (blocks of 5 elements, 12-byte
// holes): the staged chunks are scattered into the view's pieces.
TEST_CASE("Api.External32Direct.HoledFileView") {
  for (const Element& element : kElements) {
    Case c;
    c.count = 2 * 5 * 700;
    c.block = 2;
    c.stride = 3;
    c.file_block = 5;
    c.file_gap = 12;
    c.hints = flowio::testing::with_hint(kDirect, "cb_buffer_size", "4096");
    check_case(element, c, "holed_view");
  }
}

// A direct read into strided memory that meets end of file inside an
// element (the second unit of a complex double): the whole elements before
// it arrive, reversed, and the rest of memory is left as it was, also when
// the window size cuts the stream into chunks that split elements.
TEST_CASE("Api.External32Direct.ReadStopsAtWholeElements") {
  const int rank = world_rank();
  constexpr int kElements = 1000, kSize = 16;
  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "e32_direct_short_read");
  if (rank == 0) {
    // kElements complex doubles in external32, then half of one more.
    Bytes file_bytes;
    for (int i = 0; i <= kElements; ++i) {
      for (int part = 0; part < 2; ++part) {
        for (int b = 0; b < 8; ++b) file_bytes.push_back(byte_of(0, i, part * 8 + 7 - b));
      }
    }
    file_bytes.resize(file_bytes.size() - 8);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, file_bytes.data(), file_bytes.size(), 0) ==
            static_cast<ssize_t>(file_bytes.size()));
    ::close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  constexpr int kWanted = kElements + 4;
  MPI_Datatype memory_type;
  MPI_Type_vector(kWanted, 1, 2, MPI_C_DOUBLE_COMPLEX, &memory_type);
  MPI_Type_commit(&memory_type);
  for (const char* window : {"40", "16777216"}) {
    CAPTURE(window);
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::rdonly,
                           flowio::testing::with_hint(kDirect, "cb_buffer_size", window));
    file.set_view(0, MPI_C_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX, {}, "external32");
    Bytes memory(static_cast<std::size_t>(2 * kWanted * kSize), 0xEE);
    CHECK(file.read_at_all(0, memory.data(), 1, memory_type) ==
          static_cast<std::size_t>(kElements * kSize));
    CHECK(file.statistics().back().method == "direct");
    Bytes expected(memory.size(), 0xEE);
    for (int i = 0; i < kElements; ++i) {
      for (int b = 0; b < kSize; ++b)
        expected[static_cast<std::size_t>(2 * i * kSize + b)] = byte_of(0, i, b);
    }
    std::size_t first_difference = 0;
    while (first_difference < memory.size() &&
           memory[first_difference] == expected[first_difference])
      ++first_difference;
    CHECK(first_difference == memory.size());
    file.close();
  }
  MPI_Type_free(&memory_type);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A rewrite of contiguous memory over the same contiguous part of the
// file goes through the kept mapping, reversed straight into the file's
// pages (runtime/stages/direct_stage.cc, write_reversed_in_place): the file must
// hold the second write's data, encoded, and nothing of the first.
TEST_CASE("Api.External32Direct.ContiguousRewriteInPlace") {
  const int rank = world_rank(), ranks = world_size();
  for (const Element& element : kElements) {
    CAPTURE(element.name);
    const int size = element.unit * element.parts;
    const std::int64_t count = 40000 / size;
    const std::int64_t part_bytes = count * size;
    const std::string path =
        flowio::testing::scratch_path(MPI_COMM_WORLD, std::string("e32_rewrite_") + element.name);
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
    file.set_view(rank * part_bytes, element.type, element.type, {}, "external32");
    Bytes memory(static_cast<std::size_t>(part_bytes));
    for (int version = 0; version < 2; ++version) {
      for (std::int64_t i = 0; i < count; ++i) {
        for (int b = 0; b < size; ++b) {
          memory[static_cast<std::size_t>(i * size + b)] = byte_of(rank + version * ranks, i, b);
        }
      }
      CHECK(file.write_at_all(0, memory.data(), static_cast<int>(count), element.type) ==
            static_cast<std::size_t>(part_bytes));
    }
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      Bytes expected(static_cast<std::size_t>(ranks * part_bytes));
      for (int r = 0; r < ranks; ++r) {
        for (std::int64_t i = 0; i < count; ++i) {
          for (int part = 0; part < element.parts; ++part) {
            for (int b = 0; b < element.unit; ++b) {
              expected[static_cast<std::size_t>(r * part_bytes + i * size + part * element.unit +
                                                b)] =
                  byte_of(r + ranks, i, part * element.unit + element.unit - 1 - b);
            }
          }
        }
      }
      CHECK(read_whole_file<unsigned char>(path) == expected);
    }
    file.close();
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// Rewrites of contiguous memory over a rank's blocks far apart in the file
// (a checkpoint's variables), accessed by each rank itself
// (romio_cb_write=disable) or gathered into aggregators' windows
// (romio_cb_write=enable): from the second
// rewrite on they are reversed straight into the file's pages
// (runtime/stages/direct_stage.cc, write_reversed_in_place; io/window_io.cc,
// fill_window_in_place). The file must hold the last write's data,
// encoded, and nothing of the earlier ones.
TEST_CASE("Api.External32Direct.BlocksRewriteInPlace") {
  const int rank = world_rank(), ranks = world_size();
  const Element& element = kElements[3];  // double
  const int size = element.unit;
  constexpr int kBlocks = 4;
  const std::int64_t block_elements = (96 << 10) / size;
  const std::int64_t block_bytes = block_elements * size;
  const std::int64_t count = kBlocks * block_elements;
  for (const bool gathered : {false, true}) {
    CAPTURE(gathered);
    const std::string path = flowio::testing::scratch_path(
        MPI_COMM_WORLD, std::string("e32_blocks_") + (gathered ? "gathered" : "own"));
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
    // Gathered: block k of rank r at (k * ranks + r) * block_bytes, the
    // windows covered. Each rank's own: its blocks one block apart (a
    // hole between them), after those of the ranks before it.
    const std::int64_t spacing = gathered ? ranks : 2;
    const std::int64_t first = gathered ? rank : rank * kBlocks * 2;
    MPI_Datatype blocks = MPI_DATATYPE_NULL, filetype = MPI_DATATYPE_NULL;
    MPI_Type_vector(kBlocks, static_cast<int>(block_elements),
                    static_cast<int>(block_elements * spacing), element.type, &blocks);
    MPI_Type_create_resized(blocks, 0, kBlocks * spacing * block_bytes, &filetype);
    MPI_Type_commit(&filetype);
    const flowio::Hints hints{{"romio_cb_write", gathered ? "enable" : "disable"}};
    file.set_view(first * block_bytes, element.type, filetype, hints, "external32");
    Bytes memory(static_cast<std::size_t>(count * size));
    constexpr int kVersions = 3;
    for (int version = 0; version < kVersions; ++version) {
      for (std::int64_t i = 0; i < count; ++i) {
        for (int b = 0; b < size; ++b) {
          memory[static_cast<std::size_t>(i * size + b)] = byte_of(rank + version * ranks, i, b);
        }
      }
      CHECK(file.write_at_all(0, memory.data(), static_cast<int>(count), element.type) ==
            static_cast<std::size_t>(count * size));
    }
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      // The file ends with the last rank's last block (own: its hole after
      // it was never written); holes read as zeros.
      const std::int64_t file_bytes =
          gathered ? ranks * count * size
                   : ((ranks - 1) * kBlocks * 2 + kBlocks * 2 - 1) * block_bytes;
      Bytes expected(static_cast<std::size_t>(file_bytes), 0);
      for (int r = 0; r < ranks; ++r) {
        const std::int64_t r_first = gathered ? r : r * kBlocks * 2;
        for (std::int64_t i = 0; i < count; ++i) {
          const std::int64_t at = (r_first + (i / block_elements) * spacing) * block_bytes +
                                  (i % block_elements) * size;
          for (int b = 0; b < size; ++b) {
            expected[static_cast<std::size_t>(at + b)] =
                byte_of(r + (kVersions - 1) * ranks, i, size - 1 - b);
          }
        }
      }
      CHECK(read_whole_file<unsigned char>(path) == expected);
    }
    file.close();
    MPI_Type_free(&filetype);
    MPI_Type_free(&blocks);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}
