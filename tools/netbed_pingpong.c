/* A ping-pong between the first and the last rank, for tools/netbed_check.sh:
 *   netbed_pingpong BYTES REPS
 * Rank 0 prints "MiBps=<bandwidth>" (bytes moved both ways over the time
 * of REPS round trips, after one untimed round trip that connects the
 * pair). The other ranks only take part in the barriers. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 3) {
    if (rank == 0) fprintf(stderr, "usage: netbed_pingpong BYTES REPS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int bytes = atoi(argv[1]);
  const int reps = atoi(argv[2]);
  char* buffer = calloc((size_t)bytes, 1);
  const int last = ranks - 1;
  double start = 0;
  for (int round = 0; round <= reps; ++round) {
    if (round == 1) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    if (rank == 0 && last > 0) {
      MPI_Send(buffer, bytes, MPI_BYTE, last, 0, MPI_COMM_WORLD);
      MPI_Recv(buffer, bytes, MPI_BYTE, last, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == last && last > 0) {
      MPI_Recv(buffer, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  const double seconds = MPI_Wtime() - start;
  if (rank == 0) printf("MiBps=%.1f\n", 2.0 * reps * bytes / seconds / 1048576.0);
  free(buffer);
  MPI_Finalize();
  return 0;
}
