// bench/checkpoint: a simulation's checkpoint. Every rank owns one 3-D
// block of a global 3-D array of doubles for each of --vars variables; the
// file holds each variable as a whole global array (C order), one variable
// after another. Each rank's memory is contiguous (its blocks of all
// variables, variable after variable) and its view is the subarray of its
// block, which the view tiles once per variable. The ranks form the 3-D
// grid MPI_Dims_create gives; the block edge is chosen so that the file is
// about --mib MiB. The checkpoint is written then read collectively with
// flowio and with MPICH's MPI-IO in the same run.
//
// Usage: mpiexec -n N bazel-bin/bench/checkpoint [--vars=4] [--mib=256]
//   [--sync=0|1] [--op=both|write|read] [--reps=5] [--dir=$TMPDIR]
//   [--datarep=native|external32] [--grid=XxYxZ]
//
// --grid sets the process grid (x slowest; its product must be the rank
// count) instead of MPI_Dims_create's: --grid=1x1x2 splits the array along
// z, the fastest dimension, so each rank's part of a variable is many runs
// of half a row, where MPI_Dims_create's 2x1x1 leaves one run per variable.
//
// --datarep sets both sides' views in that data representation and adds
// flowio in native, timed in the same run ("vs_native").
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "bench/bench_support.h"
#include "flowio/error.h"

namespace {

std::string joined(const int values[3]) {
  return std::to_string(values[0]) + "x" + std::to_string(values[1]) + "x" +
         std::to_string(values[2]);
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::AccessSettings settings = bench::access_settings(options);
  const std::int64_t vars =
      options.integer("vars", 4, "variables in the checkpoint, each a global 3-D array of doubles");
  const std::int64_t mib = options.integer(
      "mib", 256,
      "size of the checkpoint file in MiB, about (the blocks are cubes of whole cells)");
  const std::string grid_text = options.text(
      "grid", "",
      "process grid XxYxZ (x slowest; X*Y*Z = the rank count); empty: MPI_Dims_create's");
  options.finish();
  if (vars < 1 || mib < 1) throw std::invalid_argument("--vars and --mib must be positive");

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int grid[3] = {0, 0, 0};
  if (grid_text.empty()) {
    flowio::check_mpi(MPI_Dims_create(ranks, 3, grid), "MPI_Dims_create");
  } else if (std::sscanf(grid_text.c_str(), "%dx%dx%d", &grid[0], &grid[1], &grid[2]) != 3 ||
             grid[0] < 1 || grid[1] < 1 || grid[2] < 1 || grid[0] * grid[1] * grid[2] != ranks) {
    throw std::invalid_argument("--grid must be XxYxZ with X*Y*Z = " + std::to_string(ranks) +
                                ", got " + grid_text);
  }
  const double cells_per_rank = mib * 1048576.0 / (8.0 * static_cast<double>(vars) * ranks);
  const int edge = std::max(1, static_cast<int>(std::lround(std::cbrt(cells_per_rank))));
  const int coordinates[3] = {rank / (grid[1] * grid[2]), rank / grid[2] % grid[1], rank % grid[2]};
  int global[3], block[3], starts[3];
  for (int d = 0; d < 3; ++d) {
    global[d] = grid[d] * edge;
    block[d] = edge;
    starts[d] = coordinates[d] * edge;
  }
  MPI_Datatype subarray;
  flowio::check_mpi(
      MPI_Type_create_subarray(3, global, block, starts, MPI_ORDER_C, MPI_DOUBLE, &subarray),
      "MPI_Type_create_subarray");
  const bench::Datatype view(subarray);
  const MPI_Count doubles = vars * static_cast<MPI_Count>(edge) * edge * edge;
  const double file_mib = 8.0 * static_cast<double>(doubles) * ranks / 1048576.0;

  bench::compare_access(report,
                        bench::Fields()
                            .add("vars", vars)
                            .add("global", joined(global))
                            .add("grid", joined(grid))
                            .add("file_MiB", file_mib)
                            .add("sync", settings.sync)
                            .add("datarep", settings.datarep),
                        bench::Access{0, view.get(), MPI_DOUBLE, doubles}, settings);
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_benchmark(argc, argv, "checkpoint", benchmark);
}
