// A checkpoint on many ranks (8 and 16 on the 2 cores): three variables of
// 128^3 doubles (48 MiB) split in 3-D blocks, each rank's three blocks one
// filetype, written with one collective call and again with a nonblocking
// one on 2 aggregators, read back collectively; rank 0 checks every double
// of the file where it belongs in its variable.
#include <doctest/doctest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "tests/api/test_paths.h"
#include "tests/support/world.h"

namespace {

using flowio::testing::world_rank;
using flowio::testing::world_size;

constexpr int kEdge = 128;
constexpr int kVariables = 3;
constexpr std::int64_t kCells = std::int64_t{kEdge} * kEdge * kEdge;

double value_of(int variable, std::int64_t cell) {
  return static_cast<double>(variable) * 1e7 + static_cast<double>(cell);
}

// This rank's block: its place in the process grid.
struct Block {
  std::array<int, 3> sizes{}, starts{};
  std::int64_t cells() const { return std::int64_t{sizes[0]} * sizes[1] * sizes[2]; }
};

Block block_of_rank() {
  int grid[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coordinates[3];
  MPI_Dims_create(world_size(), 3, grid);
  MPI_Comm cartesian;
  MPI_Cart_create(MPI_COMM_WORLD, 3, grid, periods, 0, &cartesian);
  MPI_Cart_coords(cartesian, world_rank(), 3, coordinates);
  MPI_Comm_free(&cartesian);
  Block block;
  for (int d = 0; d < 3; ++d) {
    const int base = kEdge / grid[d], extra = kEdge % grid[d];
    block.sizes[static_cast<std::size_t>(d)] = base + (coordinates[d] < extra ? 1 : 0);
    block.starts[static_cast<std::size_t>(d)] =
        coordinates[d] * base + std::min(coordinates[d], extra);
  }
  return block;
}

// The rank's block of each variable, the variables one after another.
MPI_Datatype filetype_of(const Block& block) {
  const int global[3] = {kEdge, kEdge, kEdge};
  MPI_Datatype one, all;
  MPI_Type_create_subarray(3, global, block.sizes.data(), block.starts.data(), MPI_ORDER_C,
                           MPI_DOUBLE, &one);
  int lengths[kVariables];
  MPI_Aint displacements[kVariables];
  MPI_Datatype types[kVariables];
  for (int v = 0; v < kVariables; ++v) {
    lengths[v] = 1;
    displacements[v] = static_cast<MPI_Aint>(v * kCells * 8);
    types[v] = one;
  }
  MPI_Type_create_struct(kVariables, lengths, displacements, types, &all);
  MPI_Type_free(&one);
  MPI_Type_commit(&all);
  return all;
}

std::vector<double> data_of(const Block& block) {
  std::vector<double> data;
  data.reserve(static_cast<std::size_t>(kVariables * block.cells()));
  for (int v = 0; v < kVariables; ++v) {
    for (int x = 0; x < block.sizes[0]; ++x) {
      for (int y = 0; y < block.sizes[1]; ++y) {
        for (int z = 0; z < block.sizes[2]; ++z) {
          const std::int64_t cell =
              (std::int64_t{block.starts[0] + x} * kEdge + block.starts[1] + y) * kEdge +
              block.starts[2] + z;
          data.push_back(value_of(v, cell));
        }
      }
    }
  }
  return data;
}

// The doubles of the file that are not where they belong.
std::int64_t misplaced_in(const std::string& path) {
  std::vector<double> file(static_cast<std::size_t>(kVariables * kCells), -1.0);
  FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) return -1;
  const std::size_t got = std::fread(file.data(), sizeof(double), file.size(), in);
  std::fclose(in);
  std::int64_t misplaced = static_cast<std::int64_t>(file.size() - got);
  for (int v = 0; v < kVariables; ++v) {
    for (std::int64_t cell = 0; cell < kCells; ++cell) {
      if (file[static_cast<std::size_t>(v * kCells + cell)] != value_of(v, cell)) ++misplaced;
    }
  }
  return misplaced;
}

}  // namespace

TEST_CASE("Scale.WideCheckpoint.BlocksOfThreeVariables") {
  const Block block = block_of_rank();
  MPI_Datatype filetype = filetype_of(block);
  const std::vector<double> data = data_of(block);
  const auto count = static_cast<MPI_Count>(data.size());
  const std::string path = flowio::testing::fresh_path("wide_checkpoint");
  for (const bool nonblocking : {false, true}) {
    CAPTURE(nonblocking);
    flowio::Hints hints;
    if (nonblocking) hints["cb_nodes"] = "2";
    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr, hints);
    file.set_view(0, MPI_DOUBLE, filetype);
    const std::size_t wrote = nonblocking ? file.iwrite_all(data.data(), count, MPI_DOUBLE).get()
                                          : file.write_all(data.data(), count, MPI_DOUBLE);
    CHECK(wrote == data.size() * sizeof(double));
    std::vector<double> back(data.size(), -1.0);
    file.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(file.read_at_all(0, back.data(), count, MPI_DOUBLE) == data.size() * sizeof(double));
    CHECK(back == data);
    file.close();
    // Removed before any rank can open it again.
    if (world_rank() == 0) {
      CHECK(misplaced_in(path) == 0);
      ::unlink(path.c_str());
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Type_free(&filetype);
}
