// The main job: 4 ranks write a noncontiguous file with flowio's futures
// API, read it back, check it, and say what they did.
//
// The global array is 512 x 512 doubles; each rank owns a block-cyclic
// share of it (a darray: rows in blocks of 8 over a 2 x 2 process grid), a
// view with many holes. The write is started, the rank "computes" while it
// proceeds, then waits; the read checks every value.
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "flowio/flowio.h"

namespace {

constexpr int kRows = 512, kColumns = 512;

double value_at(int row, int column) { return row * 1000.0 + column; }

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string path = argc > 1 ? argv[1] : "flowio_example.dat";
  int status = 0;
  try {
    int process_grid[2] = {0, 0};
    MPI_Dims_create(ranks, 2, process_grid);
    const int sizes[2] = {kRows, kColumns};
    const int distributions[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    const int block_sizes[2] = {8, MPI_DISTRIBUTE_DFLT_DARG};
    MPI_Datatype share;
    MPI_Type_create_darray(ranks, rank, 2, sizes, distributions, block_sizes, process_grid,
                           MPI_ORDER_C, MPI_DOUBLE, &share);
    MPI_Type_commit(&share);

    // The values this rank owns, in the order its view visits them.
    std::vector<double> mine;
    const int grid_row = rank / process_grid[1], grid_column = rank % process_grid[1];
    const int columns_per_rank = (kColumns + process_grid[1] - 1) / process_grid[1];
    for (int row = 0; row < kRows; ++row) {
      if ((row / 8) % process_grid[0] != grid_row) continue;
      for (int column = grid_column * columns_per_rank;
           column < std::min(kColumns, (grid_column + 1) * columns_per_rank); ++column) {
        mine.push_back(value_at(row, column));
      }
    }

    flowio::File file =
        flowio::File::open(MPI_COMM_WORLD, path, flowio::Mode::create | flowio::Mode::rdwr);
    file.set_view(0, MPI_DOUBLE, share);
    const auto start = std::chrono::steady_clock::now();
    flowio::Future<std::size_t> written =
        file.iwrite_at(0, mine.data(), static_cast<MPI_Count>(mine.size()), MPI_DOUBLE);
    double busy = 0;  // work done while the write proceeds
    for (int i = 1; i < 2000000 && !written.ready(); ++i) busy += std::sqrt(static_cast<double>(i));
    const std::size_t bytes_written = written.get();
    const double write_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    file.sync();

    std::vector<double> back(mine.size(), -1.0);
    const std::size_t bytes_read =
        file.read_at(0, back.data(), static_cast<MPI_Count>(back.size()), MPI_DOUBLE);
    long wrong = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) wrong += back[i] != mine[i] ? 1 : 0;
    const MPI_Offset file_size = file.size();
    const std::string backend = file.hints()["flowio_io_backend"];
    file.close();
    MPI_Type_free(&share);

    long total_wrong = 0;
    MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    std::printf(
        "rank %d: wrote %zu bytes in %.2f ms (computed %.3g meanwhile), read %zu bytes back, "
        "%ld wrong\n",
        rank, bytes_written, write_seconds * 1e3, busy, bytes_read, wrong);
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf(
          "flowio example: %d ranks wrote a %d x %d array of doubles as block-cyclic "
          "shares to %s (%lld bytes, %s backend); read back: %s\n",
          ranks, kRows, kColumns, path.c_str(), static_cast<long long>(file_size), backend.c_str(),
          total_wrong == 0 ? "all values correct" : "MISMATCHES");
    }
    status = total_wrong == 0 && file_size == kRows * kColumns * 8 ? 0 : 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
