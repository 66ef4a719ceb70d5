/* A block-distributed 3-D array of ints written and read collectively,
 * in the spirit of ROMIO's coll_perf (written anew here) and sized for a
 * 2-core machine: 512 x 384 x 256 ints (192 MiB), each process's part one
 * MPI_Type_create_darray; MPI_File_write_all, MPI_File_read_all, each
 * timed (on stderr, which the runs do not compare), the data checked and
 * the file compared with MPICH's. */
#include "tests/mpiio/mpiio_test.h"

static const int kGlobal[3] = {512, 384, 256};

/* Each int holds its index in the global array, C order. */
static int value_at(const int coordinates[3]) {
  return (coordinates[0] * kGlobal[1] + coordinates[1]) * kGlobal[2] + coordinates[2];
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "darray_layer");
  int grid[3] = {0, 0, 0};
  MPI_CHECK(MPI_Dims_create(t_nranks, 3, grid));
  const int distributions[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
  const int arguments[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG,
                            MPI_DISTRIBUTE_DFLT_DARG};
  MPI_Datatype part;
  MPI_CHECK(MPI_Type_create_darray(t_nranks, t_rank, 3, kGlobal, distributions, arguments, grid,
                                   MPI_ORDER_C, MPI_INT, &part));
  MPI_CHECK(MPI_Type_commit(&part));
  MPI_Count bytes = 0;
  MPI_CHECK(MPI_Type_size_c(part, &bytes));
  const int count = (int)(bytes / sizeof(int));

  /* This process's block, in the order of its part of the file. */
  int mine[3], first[3], sizes[3], periods[3] = {0, 0, 0};
  MPI_Comm cartesian;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 3, grid, periods, 0, &cartesian));
  MPI_CHECK(MPI_Cart_coords(cartesian, t_rank, 3, mine));
  MPI_Comm_free(&cartesian);
  for (int d = 0; d < 3; ++d) {
    const int block = (kGlobal[d] + grid[d] - 1) / grid[d];
    first[d] = mine[d] * block;
    sizes[d] = kGlobal[d] - first[d] < block ? kGlobal[d] - first[d] : block;
  }
  CHECK_EQ((long long)sizes[0] * sizes[1] * sizes[2], count);
  int* data = malloc((size_t)bytes);
  CHECK(data != NULL);
  int k = 0;
  for (int x = 0; x < sizes[0]; ++x) {
    for (int y = 0; y < sizes[1]; ++y) {
      for (int z = 0; z < sizes[2]; ++z) {
        const int at[3] = {first[0] + x, first[1] + y, first[2] + z};
        data[k++] = value_at(at);
      }
    }
  }

  MPI_File fh;
  t_open("darray.dat", &fh);
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, part, "native", MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  double begin = MPI_Wtime();
  t_doing("write_all");
  MPI_CHECK(MPI_File_write_all(fh, data, count, MPI_INT, MPI_STATUS_IGNORE));
  const double write_seconds = MPI_Wtime() - begin;
  t_make_visible(fh);
  memset(data, 0, (size_t)bytes);
  MPI_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  begin = MPI_Wtime();
  t_doing("read_all");
  MPI_CHECK(MPI_File_read_all(fh, data, count, MPI_INT, MPI_STATUS_IGNORE));
  const double read_seconds = MPI_Wtime() - begin;
  k = 0;
  long long wrong = 0;
  for (int x = 0; x < sizes[0]; ++x) {
    for (int y = 0; y < sizes[1]; ++y) {
      for (int z = 0; z < sizes[2]; ++z) {
        const int at[3] = {first[0] + x, first[1] + y, first[2] + z};
        wrong += data[k++] != value_at(at);
      }
    }
  }
  if (t_rank == 0) {
    fprintf(stderr, "darray_layer: %d ranks, write_all %.3f s, read_all %.3f s\n", t_nranks,
            write_seconds, read_seconds);
  }
  t_report("%lld bytes per process, %lld ints wrong", (long long)bytes, wrong);
  CHECK_EQ(wrong, 0);
  MPI_CHECK(MPI_File_close(&fh));
  free(data);
  MPI_Type_free(&part);
  return t_finish();
}
