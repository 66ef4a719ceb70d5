// The datatype corners MPI-IO implementations get wrong
// (tests/support/corner_types.h), end to end through the C++ API on 1, 2
// and 4 ranks: as filetypes and as memory types, written and read
// collectively (two-phase and direct) and independently. The oracle is MPI's
// own typemap: MPI_Unpack of the data stream says where each byte lands in
// the file, MPI_Pack says which memory bytes a memory type covers.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/corner_types.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;

// Each rank's part of the file starts at rank * kRegion (for the type
// whose stride passes 2^31, all parts start within the first region).
constexpr std::int64_t kRegion = 4096;
constexpr int kCopies = 3;

char stream_byte(std::int64_t i) { return static_cast<char>(1 + (i * 37 + world_rank()) % 251); }

struct Route {
  const char* name;
  flowio::Hints hints;
  bool collective;
};

const std::vector<Route>& routes() {
  static const std::vector<Route> all = {
      {"collective two-phase", {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}}, true},
      {"collective direct", {{"romio_cb_write", "disable"}, {"romio_cb_read", "disable"}}, true},
      {"independent", {}, false},
  };
  return all;
}

std::vector<char> pread_all(const std::string& path, std::int64_t offset, std::int64_t bytes) {
  std::vector<char> out(static_cast<std::size_t>(bytes), 0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  const ssize_t got = ::pread(fd, out.data(), out.size(), offset);
  ::close(fd);
  REQUIRE(got >= 0);
  out.resize(static_cast<std::size_t>(got));
  return out;
}

std::size_t write(flowio::File& file, const Route& route, MPI_Offset offset, const void* buffer,
                  MPI_Count count, MPI_Datatype type) {
  return route.collective ? file.write_at_all(offset, buffer, count, type)
                          : file.write_at(offset, buffer, count, type);
}

std::size_t read(flowio::File& file, const Route& route, MPI_Offset offset, void* buffer,
                 MPI_Count count, MPI_Datatype type) {
  return route.collective ? file.read_at_all(offset, buffer, count, type)
                          : file.read_at(offset, buffer, count, type);
}

// `type` as a filetype: kCopies tiles of it, from this rank's region.
void check_filetype(const CornerType& corner, const Route& route) {
  INFO(corner.name << " through " << route.name);
  MPI_Datatype type = corner.make();
  const CornerLayout layout = corner_layout(type);
  const MPI_Aint extent = layout.extent, true_lb = layout.true_lb, true_extent = layout.true_extent;
  const bool sparse = std::strcmp(corner.name, "stride_beyond_2g") == 0;
  const int copies = sparse ? 1 : kCopies;
  const std::int64_t bytes = static_cast<std::int64_t>(layout.size) * copies;
  std::vector<char> stream(static_cast<std::size_t>(bytes));
  for (std::int64_t i = 0; i < bytes; ++i) stream[static_cast<std::size_t>(i)] = stream_byte(i);
  const std::int64_t displacement = world_rank() * (sparse ? 8 : kRegion);

  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "corner_filetype");
  if (world_rank() == 0) ::unlink(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                         flowio::Mode::create | flowio::Mode::rdwr, route.hints);
  file.set_view(displacement, MPI_BYTE, type);
  CHECK(write(file, route, 0, stream.data(), bytes, MPI_BYTE) == static_cast<std::size_t>(bytes));
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<char> back(stream.size(), 0);
  CHECK(read(file, route, 0, back.data(), bytes, MPI_BYTE) == static_cast<std::size_t>(bytes));
  CHECK_MESSAGE(back == stream, "the data read back through the view differs");
  file.close();

  if (sparse) {
    // Two 4-byte blocks, at 0 and at 3 GiB from each rank's displacement.
    const std::vector<char> first = pread_all(path, displacement, 4);
    const std::vector<char> second = pread_all(path, displacement + (std::int64_t{3} << 30), 4);
    CHECK(first == std::vector<char>(stream.begin(), stream.begin() + 4));
    CHECK(second == std::vector<char>(stream.begin() + 4, stream.begin() + 8));
  } else {
    // Where MPI puts the stream's bytes: unpacked into an image of the
    // file from the displacement on (holes stay zero, as in a new file).
    REQUIRE(true_lb >= 0);
    const std::int64_t image_bytes = (copies - 1) * extent + true_lb + true_extent;
    REQUIRE(image_bytes <= kRegion);
    std::vector<char> image(static_cast<std::size_t>(image_bytes), 0);
    int position = 0;
    MPI_Unpack(stream.data(), static_cast<int>(bytes), &position, image.data(), copies, type,
               MPI_COMM_SELF);
    const std::vector<char> file_bytes = pread_all(path, displacement, image_bytes);
    CHECK_MESSAGE(file_bytes == image, "the file differs from the typemap's placement");
  }
  MPI_Type_free(&type);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has read the file before it goes
}

// `type` as a memory type: kCopies copies written to a contiguous part of
// the file and read back into fresh memory.
void check_memory_type(const CornerType& corner, const Route& route) {
  INFO(corner.name << " through " << route.name);
  MPI_Datatype type = corner.make();
  const CornerLayout layout = corner_layout(type);
  const MPI_Aint extent = layout.extent, true_lb = layout.true_lb, true_extent = layout.true_extent;
  // The buffer pointer sits `before` bytes into the allocation, so that
  // data below it (a negative true lower bound) is inside.
  const std::int64_t before = true_lb < 0 ? -true_lb : 0;
  const std::int64_t span = before + (kCopies - 1) * extent + true_lb + true_extent;
  std::vector<char> memory(static_cast<std::size_t>(span));
  for (std::size_t i = 0; i < memory.size(); ++i)
    memory[i] = stream_byte(static_cast<std::int64_t>(i));
  char* buffer = memory.data() + before;
  const std::int64_t bytes = static_cast<std::int64_t>(layout.size) * kCopies;
  std::vector<char> packed(static_cast<std::size_t>(bytes));
  int position = 0;
  MPI_Pack(buffer, kCopies, type, packed.data(), static_cast<int>(bytes), &position, MPI_COMM_SELF);
  REQUIRE(position == bytes);

  const std::string path = flowio::testing::scratch_path(MPI_COMM_WORLD, "corner_memory");
  if (world_rank() == 0) ::unlink(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, path,
                                         flowio::Mode::create | flowio::Mode::rdwr, route.hints);
  const MPI_Offset at = world_rank() * kRegion;
  CHECK(write(file, route, at, buffer, kCopies, type) == static_cast<std::size_t>(bytes));
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_MESSAGE(pread_all(path, at, bytes) == packed, "the file differs from MPI_Pack's bytes");

  // Read into memory that holds '#' everywhere: only the typemap's bytes
  // may change, to what MPI_Unpack puts there.
  std::vector<char> read_memory(memory.size(), '#');
  std::vector<char> expected(memory.size(), '#');
  position = 0;
  MPI_Unpack(packed.data(), static_cast<int>(bytes), &position, expected.data() + before, kCopies,
             type, MPI_COMM_SELF);
  CHECK(read(file, route, at, read_memory.data() + before, kCopies, type) ==
        static_cast<std::size_t>(bytes));
  CHECK_MESSAGE(read_memory == expected, "memory after the read differs from MPI_Unpack's");
  file.close();
  MPI_Type_free(&type);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has read the file before it goes
}

}  // namespace

namespace {

void check_all(int uses, bool large_count) {
  for (const CornerType& corner : corner_types) {
    if ((corner.uses & uses) == 0 || (corner.large_count != 0) != large_count) continue;
    for (const Route& route : routes()) {
      if (uses == CORNER_FILETYPE) {
        check_filetype(corner, route);
      } else {
        check_memory_type(corner, route);
      }
    }
  }
}

}  // namespace

// Every corner type as a filetype, over every route.
TEST_CASE("Api.DatatypeCorners.Filetypes") { check_all(CORNER_FILETYPE, false); }

// Every corner type as a memory type, over every route.
TEST_CASE("Api.DatatypeCorners.MemoryTypes") { check_all(CORNER_MEMORY, false); }

// Types made by the large-count constructors, and a stride past 2^31, as
// filetypes.
TEST_CASE("Api.DatatypeCorners.LargeCountFiletypes") { check_all(CORNER_FILETYPE, true); }

// Types made by the large-count constructors as memory types.
TEST_CASE("Api.DatatypeCorners.LargeCountMemoryTypes") { check_all(CORNER_MEMORY, true); }
