/* The classic atomic-mode check: rank 0 rewrites a noncontiguous region
 * (a vector view) with all 0s and all 1s in turn while the other ranks
 * read it in atomic mode; every read must find all 0s or all 1s, never a
 * mix. Independent form (write_at against read_at), then collective forms
 * (write_at_all against the readers' iread_at in flight; read_at_all
 * against rank 0's iwrite_at in flight), with two-phase I/O forced and
 * small collective buffers, so that each collective access spreads over
 * several aggregators' windows.
 *
 * The environment variable FLOWIO_TEST_LOCK, when set, is passed as the
 * hint flowio_lock (MPICH's MPI-IO ignores it).
 *
 * Outputs:
 *   zeros_ones_independent.dat  the region after the last write (all 0s),
 *                               the holes zeros
 *   zeros_ones_collective.dat   the same, written by the collective form
 *                               (all 1s) */
#include "mpiio_test.h"

enum {
  BLOCKS = 64,
  BLOCK_BYTES = 512,
  STRIDE_BYTES = 1024,
  REGION_BYTES = BLOCKS * BLOCK_BYTES,
  ROUNDS = 16
};

static MPI_Info hints(void) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", "8192");
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_Info_set(info, "romio_cb_read", "enable");
  const char* lock = getenv("FLOWIO_TEST_LOCK");
  if (lock != NULL) MPI_Info_set(info, "flowio_lock", lock);
  return info;
}

static MPI_File open_atomic(const char* name) {
  char path[4096];
  t_path(path, sizeof path, name);
  MPI_Info info = hints();
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  /* The holes of the view lie below end of file, as zeros: MPICH's data
   * sieving would otherwise fill holes past the end with whatever its
   * buffer held. */
  MPI_CHECK(MPI_File_set_size(fh, (MPI_Offset)BLOCKS * STRIDE_BYTES));
  MPI_Datatype view;
  MPI_Type_vector(BLOCKS, BLOCK_BYTES, STRIDE_BYTES, MPI_BYTE, &view);
  MPI_Type_commit(&view);
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, view, "native", MPI_INFO_NULL));
  MPI_Type_free(&view);
  MPI_CHECK(MPI_File_set_atomicity(fh, 1));
  int flag = 0;
  MPI_CHECK(MPI_File_get_atomicity(fh, &flag));
  CHECK_EQ(flag, 1);
  return fh;
}

/* 1 if `data` is all 0s or all 1s. */
static int uniform(const char* data) {
  if (data[0] != 0 && data[0] != 1) return 0;
  for (int i = 1; i < REGION_BYTES; ++i)
    if (data[i] != data[0]) return 0;
  return 1;
}

static void independent(void) {
  MPI_File fh = open_atomic("zeros_ones_independent.dat");
  char* data = calloc(REGION_BYTES, 1);
  char* back = malloc(REGION_BYTES);
  CHECK(data && back);
  MPI_Status status;
  if (t_rank == 0) MPI_CHECK(MPI_File_write_at(fh, 0, data, REGION_BYTES, MPI_BYTE, &status));
  MPI_Barrier(MPI_COMM_WORLD);
  int mixed = 0;
  for (int round = 1; round <= ROUNDS; ++round) {
    if (t_rank == 0) {
      memset(data, round % 2, REGION_BYTES);
      MPI_CHECK(MPI_File_write_at(fh, 0, data, REGION_BYTES, MPI_BYTE, &status));
    } else {
      MPI_CHECK(MPI_File_read_at(fh, 0, back, REGION_BYTES, MPI_BYTE, &status));
      CHECK_EQ(t_count(&status, MPI_BYTE), REGION_BYTES);
      mixed += !uniform(back);
    }
  }
  MPI_CHECK(MPI_File_close(&fh));
  free(back);
  free(data);
  t_report("independent: %d rounds, torn reads: %d", ROUNDS, mixed);
  CHECK_EQ(mixed, 0);
}

static void collective(void) {
  MPI_File fh = open_atomic("zeros_ones_collective.dat");
  const int writer = t_rank == 0;
  char* data = calloc(REGION_BYTES, 1);
  char* back = malloc(REGION_BYTES);
  CHECK(data && back);
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at_all(fh, 0, data, writer ? REGION_BYTES : 0, MPI_BYTE, &status));
  int mixed = 0;
  for (int round = 1; round <= ROUNDS; ++round) {
    MPI_Request request = MPI_REQUEST_NULL;
    memset(data, round % 2, REGION_BYTES);
    if (!writer) MPI_CHECK(MPI_File_iread_at(fh, 0, back, REGION_BYTES, MPI_BYTE, &request));
    MPI_CHECK(MPI_File_write_at_all(fh, 0, data, writer ? REGION_BYTES : 0, MPI_BYTE, &status));
    if (!writer) {
      MPI_CHECK(MPI_Wait(&request, &status));
      mixed += !uniform(back);
    }
    memset(data, (round + 1) % 2, REGION_BYTES);
    if (writer) MPI_CHECK(MPI_File_iwrite_at(fh, 0, data, REGION_BYTES, MPI_BYTE, &request));
    MPI_CHECK(MPI_File_read_at_all(fh, 0, back, writer ? 0 : REGION_BYTES, MPI_BYTE, &status));
    if (writer) {
      MPI_CHECK(MPI_Wait(&request, &status));
    } else {
      mixed += !uniform(back);
    }
  }
  MPI_CHECK(MPI_File_close(&fh));
  free(back);
  free(data);
  t_report("collective: %d rounds, torn reads: %d", ROUNDS, mixed);
  CHECK_EQ(mixed, 0);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "zeros_ones");
  independent();
  collective();
  return t_finish();
}
