/* Nonblocking requests completed every way a program may: large
 * independent accesses (which flowio's layer runs on its I/O thread, so
 * their requests complete after the call) under MPI_Wait at once or after
 * the operation is done, an MPI_Test loop, MPI_Waitall and MPI_Testany;
 * and small accesses, done at the call. Every count is checked through
 * the statuses, every byte read back. */
#include "mpiio_test.h"

enum { LARGE = 256 * 1024, SMALL = 4096, REQUESTS = 4 };

static unsigned char byte_of(int rank, int what, long i) {
  return (unsigned char)(rank * 37 + what * 11 + i * 7 + 1);
}

static void fill(unsigned char* data, long bytes, int what) {
  for (long i = 0; i < bytes; ++i) data[i] = byte_of(t_rank, what, i);
}

static int holds(const unsigned char* data, long bytes, int what) {
  for (long i = 0; i < bytes; ++i)
    if (data[i] != byte_of(t_rank, what, i)) return 0;
  return 1;
}

/* Where this rank's `slot`-th large region lies, and its `slot`-th small
 * one, after all large ones. */
static MPI_Offset region(int slot) { return ((MPI_Offset)slot * t_nranks + t_rank) * LARGE; }

static MPI_Offset small_region(int slot) {
  return (MPI_Offset)REQUESTS * t_nranks * LARGE + ((MPI_Offset)slot * t_nranks + t_rank) * SMALL;
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "requests");
  MPI_File fh;
  t_open("requests.dat", &fh);
  unsigned char* data = malloc(REQUESTS * (size_t)LARGE);
  unsigned char* back = malloc(REQUESTS * (size_t)LARGE);
  CHECK(data != NULL && back != NULL);
  MPI_Status status;
  MPI_Request request;

  /* MPI_Wait on a large write. */
  fill(data, LARGE, 0);
  MPI_CHECK(MPI_File_iwrite_at(fh, region(0), data, LARGE, MPI_BYTE, &request));
  t_garble(&status);
  MPI_CHECK(MPI_Wait(&request, &status));
  const int wait_count = t_count(&status, MPI_BYTE);

  /* An MPI_Test loop on a large read. */
  memset(back, 0, LARGE);
  MPI_CHECK(MPI_File_iread_at(fh, region(0), back, LARGE, MPI_BYTE, &request));
  int flag = 0;
  t_garble(&status);
  while (!flag) MPI_CHECK(MPI_Test(&request, &flag, &status));
  CHECK(request == MPI_REQUEST_NULL);
  const int test_count = t_count(&status, MPI_BYTE);
  const int test_bytes = holds(back, LARGE, 0);

  /* MPI_Wait after the write had all the time it needs. (A loop on
   * MPI_Request_get_status would be the natural test here, but MPICH 4.0.2's
   * own MPI-IO never completes a request that way: its requests complete
   * only when polled. tests/mpiio/layer_requests_test.cc checks that the
   * layer's do.) */
  fill(data, LARGE, 1);
  MPI_CHECK(MPI_File_iwrite_at(fh, region(1), data, LARGE, MPI_BYTE, &request));
  const double started = MPI_Wtime();
  while (MPI_Wtime() - started < 0.05) continue;
  t_garble(&status);
  MPI_CHECK(MPI_Wait(&request, &status));
  const int late_wait_count = t_count(&status, MPI_BYTE);

  /* A third region, written by a blocking call (MPI_Request_free on a
   * request in flight would be the natural test here, but MPICH 4.0.2's own
   * MPI-IO may still be writing when a sync returns: its asynchronous I/O
   * is finished only by a poll of the freed request, which never comes.
   * tests/mpiio/layer_requests_test.cc checks the layer there.) */
  fill(data, LARGE, 2);
  MPI_CHECK(MPI_File_write_at(fh, region(2), data, LARGE, MPI_BYTE, MPI_STATUS_IGNORE));

  /* MPI_Waitall on reads of the three regions written so far and one
   * small read; then MPI_Testany on four small writes. */
  t_make_visible(fh);
  MPI_Request requests[REQUESTS];
  MPI_Status statuses[REQUESTS];
  memset(back, 0, REQUESTS * (size_t)LARGE);
  for (int i = 0; i < 3; ++i)
    MPI_CHECK(
        MPI_File_iread_at(fh, region(i), back + (size_t)i * LARGE, LARGE, MPI_BYTE, &requests[i]));
  MPI_CHECK(
      MPI_File_iread_at(fh, region(0), back + 3 * (size_t)LARGE, SMALL, MPI_BYTE, &requests[3]));
  MPI_CHECK(MPI_Waitall(REQUESTS, requests, statuses));
  int waitall_counts = 1;
  for (int i = 0; i < 3; ++i)
    waitall_counts = waitall_counts && t_count(&statuses[i], MPI_BYTE) == LARGE;
  waitall_counts = waitall_counts && t_count(&statuses[3], MPI_BYTE) == SMALL;
  const int waitall_bytes = holds(back, LARGE, 0) && holds(back + LARGE, LARGE, 1) &&
                            holds(back + 2 * (size_t)LARGE, LARGE, 2) &&
                            holds(back + 3 * (size_t)LARGE, SMALL, 0);

  fill(data, SMALL, 3);
  for (int i = 0; i < REQUESTS; ++i)
    MPI_CHECK(MPI_File_iwrite_at(fh, small_region(i), data, SMALL, MPI_BYTE, &requests[i]));
  int completed = 0, testany_counts = 1;
  while (completed < REQUESTS) {
    int index = -1;
    flag = 0;
    MPI_CHECK(MPI_Testany(REQUESTS, requests, &index, &flag, &status));
    if (flag && index != MPI_UNDEFINED) {
      ++completed;
      testany_counts = testany_counts && t_count(&status, MPI_BYTE) == SMALL;
    }
  }
  MPI_CHECK(MPI_File_close(&fh));

  t_report(
      "Wait count %d, Test loop count %d bytes %s, late Wait count %d, Waitall counts %s "
      "bytes %s, Testany counts %s",
      wait_count, test_count, test_bytes ? "right" : "WRONG", late_wait_count,
      waitall_counts ? "right" : "WRONG", waitall_bytes ? "right" : "WRONG",
      testany_counts ? "right" : "WRONG");
  free(data);
  free(back);
  return t_finish();
}
