/* An unmodified time-stepping program (plain C, MPI-IO only, it knows
   nothing of flowio): each step computes on its block of a 3-D array of
   doubles (a smoothing sweep, a fixed amount of work), then writes the
   block with the blocking MPI_File_write_all through a subarray view, and
   every `sync_every` steps calls MPI_File_sync; the file is closed after
   the last step, inside the timing. bench/write_behind.sh runs it on
   MPICH's MPI-IO and through flowio's layer, with and without
   write-behind.
   Prints one line: the compute time per step measured alone first (no
   I/O), the whole loop's time per step (close included), and the median
   time a write call took.
   Usage: checkpoint_loop FILE [mib per rank=32] [steps=8] [compute ms=200]
          [sync_every=0 (never)] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* One smoothing sweep over the block: the "computation". */
static void sweep(double* data, size_t n) {
  for (size_t i = 1; i + 1 < n; i++)
    data[i] = 0.25 * data[i - 1] + 0.5 * data[i] + 0.25 * data[i + 1];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* path = argc > 1 ? argv[1] : "checkpoint_loop.dat";
  const double mib = argc > 2 ? atof(argv[2]) : 32;
  const int steps = argc > 3 ? atoi(argv[3]) : 8;
  const double compute_ms = argc > 4 ? atof(argv[4]) : 200;
  const int sync_every = argc > 5 ? atoi(argv[5]) : 0;

  /* A global (ranks * m) x m x m array, split along its first dimension:
     each rank's block is m^3 doubles, about `mib` MiB. */
  int m = 1;
  while ((double)(m + 1) * (m + 1) * (m + 1) * 8 <= mib * 1048576) m++;
  const size_t local = (size_t)m * m * m;
  int gsizes[3] = {ranks * m, m, m}, lsizes[3] = {m, m, m}, starts[3] = {rank * m, 0, 0};
  MPI_Datatype block;
  MPI_Type_create_subarray(3, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &block);
  MPI_Type_commit(&block);
  double* data = malloc(local * sizeof(double));
  for (size_t i = 0; i < local; i++) data[i] = (double)(rank * local + i);

  /* The work of one step: as many sweeps as take `compute_ms` here, alone
     (the same count on every rank: rank 0's). */
  int sweeps = 1;
  for (;;) {
    double t0 = MPI_Wtime();
    for (int s = 0; s < sweeps; s++) sweep(data, local);
    double took = MPI_Wtime() - t0;
    if (took * 1e3 >= compute_ms / 4 || sweeps > (1 << 20)) {
      sweeps = (int)(sweeps * compute_ms / (took * 1e3) + 0.5);
      if (sweeps < 1) sweeps = 1;
      break;
    }
    sweeps *= 2;
  }
  MPI_Bcast(&sweeps, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int step = 0; step < steps; step++)
    for (int s = 0; s < sweeps; s++) sweep(data, local);
  MPI_Barrier(MPI_COMM_WORLD);
  const double compute_alone = (MPI_Wtime() - t0) / steps;

  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  MPI_File_set_view(fh, 0, MPI_DOUBLE, block, "native", MPI_INFO_NULL);
  double* write_times = malloc((size_t)steps * sizeof(double));
  MPI_Barrier(MPI_COMM_WORLD);
  const double loop_start = MPI_Wtime();
  for (int step = 0; step < steps; step++) {
    for (int s = 0; s < sweeps; s++) sweep(data, local);
    const double w0 = MPI_Wtime();
    MPI_File_write_at_all(fh, 0, data, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
    write_times[step] = MPI_Wtime() - w0;
    if (sync_every > 0 && (step + 1) % sync_every == 0) MPI_File_sync(fh);
  }
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  const double loop = (MPI_Wtime() - loop_start) / steps;
  qsort(write_times, (size_t)steps, sizeof(double), compare);
  if (rank == 0) {
    printf(
        "checkpoint_loop ranks=%d mib=%.1f steps=%d sync_every=%d compute_s=%.4f step_s=%.4f "
        "write_call_s=%.4f\n",
        ranks, local * 8.0 / 1048576, steps, sync_every, compute_alone, loop,
        write_times[steps / 2]);
  }
  free(write_times);
  free(data);
  MPI_Type_free(&block);
  MPI_Finalize();
  return 0;
}
