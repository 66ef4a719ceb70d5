/* Install check, MPI-IO layer: a plain C MPI-IO program with nothing of
 * flowio in its source. Linked against libflowio_mpiio (or run with it
 * preloaded) its MPI_File_* calls go to flowio; tests/install/
 * check_install.sh builds and runs it. Each rank writes its contiguous
 * share collectively, reads it back and checks it. Prints one line on rank
 * 0; exits nonzero on any failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kCount = 65536 };

/* Aborts the whole job with the failing call and MPI's message: a failed
 * MPI-IO call returns an error code (MPI_ERRORS_RETURN is the default for
 * files). */
static void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  fprintf(stderr, "%s failed: %s\n", what, message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* path = argc > 1 ? argv[1] : "flowio_mpiio_install_check.dat";

  int* mine = malloc(kCount * sizeof(int));
  int* back = malloc(kCount * sizeof(int));
  if (!mine || !back) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < kCount; ++i) {
    mine[i] = rank * 1000003 + i;
    back[i] = -1;
  }
  const MPI_Offset offset = (MPI_Offset)rank * kCount * sizeof(int);

  MPI_File file;
  MPI_Status status;
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file),
        "MPI_File_open");
  check(MPI_File_write_at_all(file, offset, mine, kCount, MPI_INT, &status),
        "MPI_File_write_at_all");
  check(MPI_File_read_at_all(file, offset, back, kCount, MPI_INT, &status), "MPI_File_read_at_all");
  int received = 0;
  MPI_Get_count(&status, MPI_INT, &received);
  check(MPI_File_close(&file), "MPI_File_close");

  long wrong = received == kCount ? 0 : 1;
  for (int i = 0; i < kCount; ++i) wrong += back[i] != mine[i];
  long total_wrong = 0;
  MPI_Allreduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("install check (MPI-IO layer): %d ranks, %ld wrong values: %s\n", ranks, total_wrong,
           total_wrong == 0 ? "ok" : "FAILED");
  }
  free(mine);
  free(back);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
