// Differential test against MPICH's MPI-IO: random views, memory types,
// counts and offsets; every rank writes through flowio to one file and
// through MPI_File_write_at to another, both over the same background
// bytes, and the files must be byte-identical; reads through flowio must
// return what MPI_File_read_at returns.
//
// MPICH is given the data packed by MPI_Pack rather than the memory type
// itself: ROMIO 4.0.2 places data wrongly for some nested resized memory
// types (it disagrees with MPI_Pack there), and MPI_Pack defines the order.
//
// FLOWIO_DIFF_CASES sets the number of cases (default 150; a fifth under
// --config=asan); FLOWIO_DIFF_SEED
// the base seed (default 20261125; case i uses seed base + i, printed on
// failure so a case can be replayed alone with FLOWIO_DIFF_FIRST=i).
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "runtime/core/flat_type.h"
#include "tests/api/differential_run.h"
#include "tests/api/test_paths.h"
#include "tests/support/random_types.h"

namespace {

std::vector<char> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A buffer for `count` copies of a memory type, addressed from its origin.
struct TypedBuffer {
  std::vector<unsigned char> bytes;
  std::int64_t low = 0;  // origin = bytes.data() - low

  TypedBuffer(MPI_Datatype type, std::int64_t count) {
    const flowio::core::FlatType flat = flowio::core::flatten(type);
    const std::int64_t reach = (count > 0 ? count - 1 : 0) * flat.extent();
    low = flat.true_lb() + std::min<std::int64_t>(0, reach);
    const std::int64_t high =
        flat.true_lb() + flat.true_extent() + std::max<std::int64_t>(0, reach);
    bytes.assign(static_cast<std::size_t>(std::max<std::int64_t>(high - low, 0)) + 1, 0xA5);
  }
  unsigned char* origin() { return bytes.data() - low; }
};

struct Case {
  MPI_Datatype filetype = MPI_DATATYPE_NULL;  // this rank's, interleaved with the others'
  MPI_Datatype etype = MPI_BYTE;
  MPI_Datatype memory_type = MPI_DATATYPE_NULL;
  std::int64_t displacement = 0;
  int count = 0;
  MPI_Offset offset = 0;
  std::string description;

  ~Case() {
    for (MPI_Datatype* type : {&filetype, &memory_type}) {
      if (*type != MPI_DATATYPE_NULL) MPI_Type_free(type);
    }
    if (etype != MPI_BYTE) MPI_Type_free(&etype);
  }
};

// Builds a case: each rank a different random monotone filetype, tiled so
// that ranks interleave without overlapping (rank r's tile k sits at
// displacement + (k * ranks + r) * span).
void make_case(std::mt19937_64& rng, std::uint64_t case_seed, int rank, int ranks, Case& c) {
  using flowio::testing::TypeShape;
  MPI_Datatype base = MPI_DATATYPE_NULL;
  MPI_Count size = 0;
  std::string base_text;
  do {
    if (base != MPI_DATATYPE_NULL) MPI_Type_free(&base);
    base = flowio::testing::random_datatype(rng, TypeShape::monotone, 2048, &base_text,
                                            flowio::testing::Constructs::romio_file_view_safe);
    MPI_Type_size_x(base, &size);
  } while (size == 0);
  const flowio::core::FlatType flat = flowio::core::flatten(base);
  const long long end = flat.true_lb() + flat.true_extent();
  long long span = std::max<long long>(end, 1);
  MPI_Allreduce(MPI_IN_PLACE, &span, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Datatype tiled;
  MPI_Type_create_resized(base, 0, span * ranks, &tiled);
  MPI_Type_free(&base);
  MPI_Type_commit(&tiled);
  c.filetype = tiled;
  // The same base on every rank, so that the ranks' tiles interleave.
  c.displacement =
      static_cast<std::int64_t>(case_seed % 64) + static_cast<std::int64_t>(rank) * span;

  std::string memory_text;
  c.memory_type = flowio::testing::random_datatype(rng, TypeShape::any_order, 2048, &memory_text);
  MPI_Count memory_size = 0;
  MPI_Type_size_x(c.memory_type, &memory_size);
  c.count = static_cast<int>(rng() % 4);

  // An etype of several bytes when the sizes allow it, to exercise offsets
  // counted in etypes.
  const long long etype_bytes = (rng() % 2 == 0) ? 1 : 2 + static_cast<long long>(rng() % 3);
  if (etype_bytes > 1 && size % etype_bytes == 0 && (memory_size * c.count) % etype_bytes == 0) {
    MPI_Type_contiguous(static_cast<int>(etype_bytes), MPI_BYTE, &c.etype);
    MPI_Type_commit(&c.etype);
  }
  MPI_Count etype_size = 1;
  MPI_Type_size_x(c.etype, &etype_size);
  c.offset = static_cast<MPI_Offset>(rng() % static_cast<std::uint64_t>(3 * size / etype_size + 1));
  c.description = "filetype " + base_text + " | memory " + memory_text + " x" +
                  std::to_string(c.count) + " | etype " + std::to_string(etype_size) +
                  " | offset " + std::to_string(c.offset) + " | disp " +
                  std::to_string(c.displacement);
}

}  // namespace

// Random views and memory types: files byte-identical to MPICH's, reads
// identical to MPICH's.
TEST_CASE("Api.Differential.RandomIndependentAccess") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const flowio::testing::DifferentialRun run = flowio::testing::differential_run(150, 20261125);
  const long cases = run.cases, first = run.first, seed = run.seed;
  const std::string flowio_path = flowio::testing::scratch_path(MPI_COMM_WORLD, "diff_flowio");
  const std::string mpich_path = flowio::testing::scratch_path(MPI_COMM_WORLD, "diff_mpich");
  long mismatches = 0;
  for (long index = first; index < first + cases; ++index) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed + index) * 7919 + rank);
    Case c;
    make_case(rng, static_cast<std::uint64_t>(seed + index), rank, ranks, c);
    CAPTURE(index);
    CAPTURE(rank);
    CAPTURE(c.description);
    if (run.verbose) MESSAGE(c.description);
    TypedBuffer data(c.memory_type, c.count);
    for (auto& byte : data.bytes) byte = static_cast<unsigned char>(rng());

    // Both files start with the same background bytes, so that a write
    // that touched bytes outside its pieces would show.
    MPI_Count memory_size = 0;
    MPI_Type_size_x(c.memory_type, &memory_size);
    const std::int64_t stream_bytes = memory_size * c.count;
    long long file_end = c.displacement;
    {
      const flowio::core::FlatType flat_filetype = flowio::core::flatten(c.filetype);
      MPI_Count etype_size = 1;
      MPI_Type_size_x(c.etype, &etype_size);
      const std::int64_t stream_end = c.offset * etype_size + stream_bytes + 64;
      const std::int64_t tiles = stream_end / flat_filetype.size() + 1;
      file_end = c.displacement + tiles * flat_filetype.extent();
    }
    MPI_Allreduce(MPI_IN_PLACE, &file_end, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
      std::mt19937_64 background_rng(static_cast<std::uint64_t>(seed + index));
      std::vector<char> background(static_cast<std::size_t>(file_end));
      for (char& byte : background) byte = static_cast<char>(background_rng());
      for (const std::string& path : {flowio_path, mpich_path}) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(background.data(), static_cast<std::streamsize>(background.size()));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, flowio_path, flowio::Mode::create | flowio::Mode::rdwr);
    file.set_view(c.displacement, c.etype, c.filetype);
    const std::size_t written = file.write_at(c.offset, data.origin(), c.count, c.memory_type);
    CHECK(written == static_cast<std::size_t>(stream_bytes));
    file.close();

    // MPICH writes the same data packed by MPI_Pack (the definition of the
    // memory type's order), through the same file view.
    std::vector<unsigned char> packed(static_cast<std::size_t>(stream_bytes) + 1);
    int packed_position = 0;
    if (stream_bytes > 0)
      MPI_Pack(data.origin(), c.count, c.memory_type, packed.data(),
               static_cast<int>(packed.size()), &packed_position, MPI_COMM_SELF);
    MPI_File reference;
    REQUIRE(MPI_File_open(MPI_COMM_WORLD, mpich_path.c_str(), MPI_MODE_RDWR, MPI_INFO_NULL,
                          &reference) == MPI_SUCCESS);
    MPI_File_set_view(reference, c.displacement, c.etype, c.filetype, "native", MPI_INFO_NULL);
    MPI_Status status;
    REQUIRE(MPI_File_write_at(reference, c.offset, packed.data(), static_cast<int>(stream_bytes),
                              MPI_BYTE, &status) == MPI_SUCCESS);
    MPI_File_close(&reference);
    MPI_Barrier(MPI_COMM_WORLD);

    int same = 1;
    if (rank == 0) same = read_whole_file(flowio_path) == read_whole_file(mpich_path) ? 1 : 0;
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_MESSAGE(same == 1, "files differ");
    if (!same) ++mismatches;

    // Read back a window, sometimes shifted, both ways: flowio into the
    // memory type, MPICH into a packed buffer then MPI_Unpack.
    MPI_Offset read_offset = c.offset;
    if (rng() % 3 == 0) read_offset += static_cast<MPI_Offset>(rng() % 5);
    flowio::File reader = flowio::File::open(MPI_COMM_WORLD, mpich_path, flowio::Mode::rdonly);
    reader.set_view(c.displacement, c.etype, c.filetype);
    TypedBuffer by_flowio(c.memory_type, c.count), by_mpich(c.memory_type, c.count);
    const std::size_t read_bytes =
        reader.read_at(read_offset, by_flowio.origin(), c.count, c.memory_type);
    reader.close();
    REQUIRE(MPI_File_open(MPI_COMM_WORLD, mpich_path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL,
                          &reference) == MPI_SUCCESS);
    MPI_File_set_view(reference, c.displacement, c.etype, c.filetype, "native", MPI_INFO_NULL);
    std::vector<unsigned char> read_packed(static_cast<std::size_t>(stream_bytes) + 1);
    REQUIRE(MPI_File_read_at(reference, read_offset, read_packed.data(),
                             static_cast<int>(stream_bytes), MPI_BYTE, &status) == MPI_SUCCESS);
    MPI_File_close(&reference);
    packed_position = 0;
    // (MPICH 4.0.2 divides by zero unpacking zero bytes.)
    if (stream_bytes > 0)
      MPI_Unpack(read_packed.data(), static_cast<int>(read_packed.size()), &packed_position,
                 by_mpich.origin(), c.count, c.memory_type, MPI_COMM_SELF);
    MPI_Count mpich_bytes = 0;
    MPI_Get_elements_x(&status, MPI_BYTE, &mpich_bytes);
    CHECK(read_bytes == static_cast<std::size_t>(stream_bytes));
    CHECK(mpich_bytes == stream_bytes);
    CHECK(by_flowio.bytes == by_mpich.bytes);
  }
  if (rank == 0) {
    MESSAGE("differential cases: " << cases << " from seed " << seed << " (first " << first
                                   << "), file mismatches: " << mismatches);
  }
}
