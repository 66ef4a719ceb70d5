/* An unmodified MPI-IO program, written the way a new user would (it knows
   nothing of flowio): a global n^3 array of doubles, block distributed over
   a 3-D process grid, written with MPI_File_write_all through a subarray
   view, read back with MPI_File_read_all and verified, `reps` times; prints
   the median times. bench/preload.sh runs it with and without the MPI-IO
   layer preloaded.
   Usage: preload_checkpoint FILE [n=256] [reps=3] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const char *path = argc > 1 ? argv[1] : "ckpt.dat";
  int n = argc > 2 ? atoi(argv[2]) : 256;      /* global n^3 doubles */
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
  MPI_Dims_create(nprocs, 3, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &grid);
  MPI_Cart_coords(grid, rank, 3, coords);
  int gsizes[3] = {n, n, n}, lsizes[3], starts[3];
  for (int d = 0; d < 3; d++) {
    lsizes[d] = n / dims[d];
    starts[d] = coords[d] * lsizes[d];
  }
  size_t local = (size_t)lsizes[0] * lsizes[1] * lsizes[2];
  double *data = malloc(local * sizeof(double)), *back = malloc(local * sizeof(double));
  size_t k = 0;
  for (int i = 0; i < lsizes[0]; i++)
    for (int j = 0; j < lsizes[1]; j++)
      for (int l = 0; l < lsizes[2]; l++)
        data[k++] = ((double)(starts[0] + i) * n + (starts[1] + j)) * n + (starts[2] + l);
  MPI_Datatype block;
  MPI_Type_create_subarray(3, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &block);
  MPI_Type_commit(&block);

  double write_times[64], read_times[64];
  for (int r = 0; r < reps && r < 64; r++) {
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, block, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File_write_all(fh, data, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    MPI_File_read_all(fh, back, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    MPI_File_close(&fh);
    write_times[r] = t1 - t0;
    read_times[r] = t2 - t1;
    for (size_t i = 0; i < local; i++)
      if (back[i] != data[i]) { fprintf(stderr, "rank %d: mismatch at %zu\n", rank, i); MPI_Abort(MPI_COMM_WORLD, 1); }
  }
  /* medians */
  for (int a = 0; a < reps; a++) for (int b = a + 1; b < reps; b++) {
    if (write_times[b] < write_times[a]) { double t = write_times[a]; write_times[a] = write_times[b]; write_times[b] = t; }
    if (read_times[b] < read_times[a]) { double t = read_times[a]; read_times[a] = read_times[b]; read_times[b] = t; }
  }
  double mib = (double)n * n * n * 8 / 1048576.0;
  if (rank == 0)
    printf("ranks=%d n=%d MiB=%.0f write_s=%.4f write_MiBps=%.0f read_s=%.4f read_MiBps=%.0f verified=yes\n",
           nprocs, n, mib, write_times[reps / 2], mib / write_times[reps / 2], read_times[reps / 2], mib / read_times[reps / 2]);
  MPI_Type_free(&block);
  MPI_Comm_free(&grid);
  free(data); free(back);
  MPI_Finalize();
  return 0;
}
