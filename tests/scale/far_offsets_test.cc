// Offsets past 2^40 bytes in a sparse file: its size set past 2^43,
// explicit byte offsets past 2^42 under the default view, a view whose
// displacement is past 2^40 with collective calls at view offsets whose
// file offsets pass 2^41, the individual file pointer moved there, and the
// size set again and read. The reads, sizes, the pointer and the file
// itself must be what MPICH's MPI-IO gives. Both files are that long
// before the first write: MPICH's MPI-IO fills the holes of what it sieves
// past the end of the file with garbage (tests/api/differential_case.h).
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/sparse_file.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr std::int64_t kTiB = std::int64_t{1} << 40;
constexpr int kTileInts = 250;   // each rank's tile of the view: 1000 bytes
constexpr int kCallInts = 2000;  // 8 tiles per call

MPI_Offset view_displacement() { return kTiB + 777 + world_rank() * kTileInts * 4; }

MPI_Datatype tiles() {
  MPI_Datatype tile, type;
  MPI_Type_contiguous(kTileInts, MPI_INT, &tile);
  MPI_Type_create_resized(tile, 0, std::int64_t{kTileInts} * 4 * world_size(), &type);
  MPI_Type_free(&tile);
  MPI_Type_commit(&type);
  return type;
}

std::vector<int> data_of(int call) {
  std::vector<int> data(kCallInts);
  for (int i = 0; i < kCallInts; ++i)
    data[static_cast<std::size_t>(i)] = world_rank() << 24 | call << 16 | i;
  return data;
}

// View offsets (ints) of the calls through the view: the start, and one
// whose file offset passes 2^41.
const MPI_Offset kViewOffsets[] = {0, (std::int64_t{1} << 39) + 5};
// Byte offsets of the independent calls under the default view, rank by
// rank apart.
MPI_Offset explicit_offset(int k) {
  const MPI_Offset bases[] = {(std::int64_t{1} << 42) + 3, 3 * kTiB + 100};
  return bases[k] + world_rank() * kCallInts * 4;
}

constexpr MPI_Offset kFirstSize = std::int64_t{1} << 43;
constexpr MPI_Offset kLastSize = (std::int64_t{1} << 43) + 12345;

// Everything a run returned.
struct Outcome {
  std::vector<std::vector<int>> reads;
  std::vector<MPI_Offset> sizes;
  MPI_Offset position = 0;
};

Outcome run_flowio(const std::string& path, MPI_Datatype filetype) {
  Outcome out;
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  file.set_size(kFirstSize);
  // Under the default view, at explicit byte offsets: blocking and not.
  const std::vector<int> first = data_of(0), second = data_of(1);
  CHECK(file.write_at(explicit_offset(0), first.data(), kCallInts, MPI_INT) == kCallInts * 4);
  CHECK(file.iwrite_at(explicit_offset(1), second.data(), kCallInts, MPI_INT).get() ==
        kCallInts * 4);
  out.sizes.push_back(file.size());
  // Through a view displaced past 2^40: collective, then independent
  // through the individual pointer moved past 2^41.
  file.set_view(view_displacement(), MPI_INT, filetype);
  const std::vector<int> third = data_of(2), fourth = data_of(3), fifth = data_of(4);
  CHECK(file.write_at_all(kViewOffsets[0], third.data(), kCallInts, MPI_INT) == kCallInts * 4);
  CHECK(file.iwrite_at_all(kViewOffsets[1], fourth.data(), kCallInts, MPI_INT).get() ==
        kCallInts * 4);
  file.seek(kViewOffsets[1] + kCallInts, flowio::Whence::set);
  CHECK(file.write(fifth.data(), kCallInts, MPI_INT) == kCallInts * 4);
  out.position = file.position();
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  out.sizes.push_back(file.size());
  // Read back across the writes' edges.
  for (const MPI_Offset at : {kViewOffsets[0] + 10, kViewOffsets[1] + kCallInts - 100}) {
    std::vector<int> read(kCallInts, -1);
    CHECK(file.read_at_all(at, read.data(), kCallInts, MPI_INT) == kCallInts * 4);
    out.reads.push_back(read);
  }
  file.set_view(0, MPI_BYTE, MPI_BYTE);
  std::vector<int> read(kCallInts, -1);
  CHECK(file.iread_at(explicit_offset(0) - 40, read.data(), kCallInts, MPI_INT).get() ==
        kCallInts * 4);
  out.reads.push_back(read);
  file.set_size(kLastSize);
  out.sizes.push_back(file.size());
  file.close();
  return out;
}

Outcome run_mpich(const std::string& path, MPI_Datatype filetype) {
  Outcome out;
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &file) == MPI_SUCCESS);
  MPI_File_set_size(file, kFirstSize);
  const std::vector<int> first = data_of(0), second = data_of(1);
  MPI_File_write_at(file, explicit_offset(0), first.data(), kCallInts, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_write_at(file, explicit_offset(1), second.data(), kCallInts, MPI_INT, MPI_STATUS_IGNORE);
  MPI_Offset size = 0;
  MPI_File_get_size(file, &size);
  out.sizes.push_back(size);
  MPI_File_set_view(file, view_displacement(), MPI_INT, filetype, "native", MPI_INFO_NULL);
  const std::vector<int> third = data_of(2), fourth = data_of(3), fifth = data_of(4);
  MPI_File_write_at_all(file, kViewOffsets[0], third.data(), kCallInts, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_write_at_all(file, kViewOffsets[1], fourth.data(), kCallInts, MPI_INT,
                        MPI_STATUS_IGNORE);
  MPI_File_seek(file, kViewOffsets[1] + kCallInts, MPI_SEEK_SET);
  MPI_File_write(file, fifth.data(), kCallInts, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_get_position(file, &out.position);
  MPI_File_sync(file);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_get_size(file, &size);
  out.sizes.push_back(size);
  for (const MPI_Offset at : {kViewOffsets[0] + 10, kViewOffsets[1] + kCallInts - 100}) {
    std::vector<int> read(kCallInts, -1);
    MPI_File_read_at_all(file, at, read.data(), kCallInts, MPI_INT, MPI_STATUS_IGNORE);
    out.reads.push_back(read);
  }
  MPI_File_set_view(file, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  std::vector<int> read(kCallInts, -1);
  MPI_File_read_at(file, explicit_offset(0) - 40, read.data(), kCallInts, MPI_INT,
                   MPI_STATUS_IGNORE);
  out.reads.push_back(read);
  MPI_File_set_size(file, kLastSize);
  MPI_File_get_size(file, &size);
  out.sizes.push_back(size);
  MPI_File_close(&file);
  return out;
}

}  // namespace

TEST_CASE("Scale.FarOffsets.Past2To40") {
  MPI_Datatype filetype = tiles();
  const std::string flowio_path = flowio::testing::fresh_path("far_offsets_flowio");
  const std::string mpich_path = flowio::testing::fresh_path("far_offsets_mpich");
  const Outcome by_flowio = run_flowio(flowio_path, filetype);
  const Outcome by_mpich = run_mpich(mpich_path, filetype);
  CHECK(by_flowio.sizes == by_mpich.sizes);
  CHECK(by_flowio.position == by_mpich.position);
  CHECK(by_flowio.reads == by_mpich.reads);
  // Whoever read: the second view read holds the fourth write's last 100
  // ints, then the fifth's first.
  CHECK(by_flowio.reads[1][99] == data_of(3)[kCallInts - 1]);
  CHECK(by_flowio.reads[1][100] == data_of(4)[0]);
  CHECK(by_flowio.sizes.back() == kLastSize);
  if (world_rank() == 0) {
    std::string why;
    CHECK_MESSAGE(flowio::testing::same_sparse_files(flowio_path, mpich_path, why), why);
    CHECK(flowio::testing::allocated_bytes(flowio_path) < (std::int64_t{64} << 20));
    ::unlink(flowio_path.c_str());
    ::unlink(mpich_path.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&filetype);
}

namespace {

// Whether `call` throws UsageError with code `code`.
template <typename Call>
bool refused(Call&& call, flowio::ErrorCode code) {
  try {
    call();
  } catch (const flowio::UsageError& error) {
    return error.code() == code;
  }
  return false;
}

}  // namespace

// Offsets whose bytes would pass file offset 2^62 (where the sieve lock
// lies) or whose arithmetic would pass 2^63 are refused at the call, never
// wrapped around.
TEST_CASE("Scale.FarOffsets.PastTheLimitRefused") {
  using flowio::ErrorCode;
  const std::string path = flowio::testing::fresh_path("far_offsets_limit");
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  const std::int64_t limit = std::int64_t{1} << 62;
  char data[100] = {};
  CHECK(refused([&] { file.write_at(limit - 50, data, 100, MPI_BYTE); },
                ErrorCode::invalid_argument));
  CHECK(refused([&] { file.read_at(std::numeric_limits<MPI_Offset>::max(), data, 1, MPI_BYTE); },
                ErrorCode::invalid_argument));
  CHECK(refused([&] { (void)file.byte_offset(limit); }, ErrorCode::invalid_argument));
  file.seek(std::numeric_limits<MPI_Offset>::max(), flowio::Whence::set);
  CHECK(refused([&] { file.seek(1, flowio::Whence::current); }, ErrorCode::invalid_argument));
  CHECK(refused([&] { file.write(data, 1, MPI_BYTE); }, ErrorCode::invalid_argument));
  // Offsets in ints of a view: 2^62 of them are 2^64 bytes.
  file.set_view(0, MPI_INT, MPI_INT);
  CHECK(refused([&] { file.write_at(limit, data, 1, MPI_INT); }, ErrorCode::invalid_argument));
  CHECK(refused([&] { file.write_at_all(limit, data, 1, MPI_INT); }, ErrorCode::invalid_argument));
  CHECK(refused([&] { file.set_view(limit, MPI_INT, MPI_INT); }, ErrorCode::invalid_datatype));
  // Far below, it works.
  CHECK(file.write_at(std::int64_t{1} << 40, data, 25, MPI_INT) == 100);
  file.close();
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) ::unlink(path.c_str());
}
