// Filetypes whose size passes 2^31 and 2^32 bytes: each process's part of
// a 3-D array of doubles, 1024 x 1024 x 288 (2.25 GiB) and 1024 x 1024 x
// 576 (4.5 GiB), as one subarray. set_view, collective writes of a few
// KiB at the start of the view, across 2^31 bytes of it, near its end and
// across into the filetype's second copy, then collective and independent
// reads of parts: every double must be where the view puts it, and the
// file (sparse, up to 36 GiB long, a few MiB written) and every buffer
// read byte for byte what MPICH's MPI-IO gives.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/sparse_file.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr MPI_Offset kDisplacement = 1000;    // not a multiple of anything
constexpr std::int64_t kWriteDoubles = 4096;  // 32 KiB per call: about 14 rows

// This process's 1024 x 1024 x depth block of a 1024 x 1024 x (ranks *
// depth) array of doubles.
MPI_Datatype block_of(int depth) {
  const int sizes[] = {1024, 1024, world_size() * depth};
  const int subsizes[] = {1024, 1024, depth};
  const int starts[] = {0, 0, world_rank() * depth};
  MPI_Datatype type;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
  MPI_Type_commit(&type);
  return type;
}

// The file's size before the calls, past every access (they reach into
// the filetype's second copy): both sides start from it, since MPICH's
// MPI-IO fills the holes of what it sieves past the end of the file with
// garbage (see tests/api/differential_case.h).
MPI_Offset file_bytes(std::int64_t view_doubles) {
  return kDisplacement + 2 * view_doubles * 8 * world_size();
}

// Where the calls start in the view, in doubles: the start, across 2^31
// bytes, near the end of the first copy of the filetype, and across into
// the second.
std::vector<MPI_Offset> write_offsets(std::int64_t view_doubles) {
  return {0, ((std::int64_t{1} << 31) - 3000) / 8, view_doubles - 3 * kWriteDoubles,
          view_doubles - kWriteDoubles / 2};
}

std::vector<double> data_of(int call) {
  std::vector<double> data(kWriteDoubles);
  for (std::int64_t i = 0; i < kWriteDoubles; ++i) {
    data[static_cast<std::size_t>(i)] = world_rank() * 1e9 + call * 1e6 + static_cast<double>(i);
  }
  return data;
}

// What a run returned: the buffers of its reads.
struct Reads {
  std::vector<double> collective, independent;
};

// The reads: collectively across the second write and past it (into
// bytes nobody wrote), independently around the last.
MPI_Offset collective_read_at(const std::vector<MPI_Offset>& at) { return at[1] - 100; }
MPI_Offset independent_read_at(const std::vector<MPI_Offset>& at) { return at[3] - 200; }

Reads run_flowio(const std::string& path, MPI_Datatype block, std::int64_t view_doubles) {
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
  file.set_size(file_bytes(view_doubles));
  file.set_view(kDisplacement, MPI_DOUBLE, block);
  const std::vector<MPI_Offset> at = write_offsets(view_doubles);
  for (std::size_t call = 0; call < at.size(); ++call) {
    const std::vector<double> data = data_of(static_cast<int>(call));
    if (call % 2 == 0) {
      CHECK(file.write_at_all(at[call], data.data(), kWriteDoubles, MPI_DOUBLE) ==
            kWriteDoubles * 8);
    } else {
      CHECK(file.iwrite_at_all(at[call], data.data(), kWriteDoubles, MPI_DOUBLE).get() ==
            kWriteDoubles * 8);
    }
  }
  file.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  Reads reads{std::vector<double>(2 * kWriteDoubles, -1.0),
              std::vector<double>(kWriteDoubles, -1.0)};
  CHECK(file.read_at_all(collective_read_at(at), reads.collective.data(), 2 * kWriteDoubles,
                         MPI_DOUBLE) == 2 * kWriteDoubles * 8);
  CHECK(file.read_at(independent_read_at(at), reads.independent.data(), kWriteDoubles,
                     MPI_DOUBLE) == kWriteDoubles * 8);
  file.close();
  return reads;
}

Reads run_mpich(const std::string& path, MPI_Datatype block, std::int64_t view_doubles) {
  MPI_File file;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &file) == MPI_SUCCESS);
  REQUIRE(MPI_File_set_size(file, file_bytes(view_doubles)) == MPI_SUCCESS);
  REQUIRE(MPI_File_set_view(file, kDisplacement, MPI_DOUBLE, block, "native", MPI_INFO_NULL) ==
          MPI_SUCCESS);
  const std::vector<MPI_Offset> at = write_offsets(view_doubles);
  for (std::size_t call = 0; call < at.size(); ++call) {
    const std::vector<double> data = data_of(static_cast<int>(call));
    REQUIRE(MPI_File_write_at_all(file, at[call], data.data(), kWriteDoubles, MPI_DOUBLE,
                                  MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  MPI_File_sync(file);
  MPI_Barrier(MPI_COMM_WORLD);
  Reads reads{std::vector<double>(2 * kWriteDoubles, -1.0),
              std::vector<double>(kWriteDoubles, -1.0)};
  REQUIRE(MPI_File_read_at_all(file, collective_read_at(at), reads.collective.data(),
                               2 * kWriteDoubles, MPI_DOUBLE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_File_read_at(file, independent_read_at(at), reads.independent.data(), kWriteDoubles,
                           MPI_DOUBLE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  MPI_File_close(&file);
  return reads;
}

// The doubles of this rank's writes that are not where the view puts them
// in the file at `path`: row j of copy k of the subarray lies at k * ranks
// * size + (j * ranks + rank) * depth * 8 past the displacement.
std::int64_t misplaced(const std::string& path, int depth, std::int64_t view_doubles) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  const std::int64_t row = std::int64_t{depth} * 8, size = view_doubles * 8;
  const std::int64_t extent = size * world_size();
  const std::vector<MPI_Offset> at = write_offsets(view_doubles);
  std::int64_t wrong = 0;
  for (std::size_t call = 0; call < at.size(); ++call) {
    const std::vector<double> data = data_of(static_cast<int>(call));
    for (std::int64_t i = 0; i < kWriteDoubles; ++i) {
      const std::int64_t stream = (at[call] + i) * 8, within = stream % size;
      const std::int64_t offset = kDisplacement + stream / size * extent +
                                  within / row * row * world_size() + world_rank() * row +
                                  within % row;
      double got = -1;
      if (::pread(fd, &got, 8, offset) != 8 || got != data[static_cast<std::size_t>(i)]) ++wrong;
    }
  }
  ::close(fd);
  return wrong;
}

}  // namespace

TEST_CASE("Scale.HugeFiletype.SubarrayViewsPast2To31And2To32") {
  for (const int depth : {288, 576}) {
    CAPTURE(depth);
    MPI_Datatype block = block_of(depth);
    MPI_Count size = 0;
    MPI_Type_size_c(block, &size);
    REQUIRE(size == std::int64_t{1024} * 1024 * depth * 8);
    const std::string flowio_path = flowio::testing::fresh_path("huge_view_flowio");
    const std::string mpich_path = flowio::testing::fresh_path("huge_view_mpich");
    const Reads by_flowio = run_flowio(flowio_path, block, size / 8);
    const Reads by_mpich = run_mpich(mpich_path, block, size / 8);
    CHECK(misplaced(flowio_path, depth, size / 8) == 0);
    CHECK(by_flowio.collective == by_mpich.collective);
    CHECK(by_flowio.independent == by_mpich.independent);
    // What the reads must hold, whoever did them: the second write's data
    // 100 doubles in, zeros past it; the last write's from 200 doubles in.
    CHECK(by_flowio.collective[100] == data_of(1)[0]);
    CHECK(by_flowio.collective[100 + kWriteDoubles] == 0.0);
    CHECK(by_flowio.independent[200] == data_of(3)[0]);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's check done before the files go
    if (world_rank() == 0) {
      std::string why;
      CHECK_MESSAGE(flowio::testing::same_sparse_files(flowio_path, mpich_path, why), why);
      // Past 2^33 bytes, of which a few MiB are on storage.
      struct stat info {};
      ::stat(flowio_path.c_str(), &info);
      CHECK(info.st_size > (std::int64_t{1} << 33));
      CHECK(flowio::testing::allocated_bytes(flowio_path) < (std::int64_t{256} << 20));
      ::unlink(flowio_path.c_str());
      ::unlink(mpich_path.c_str());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&block);
  }
}
