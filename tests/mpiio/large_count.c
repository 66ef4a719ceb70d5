/* Counts above 2^31 through the MPI-IO layer's large-count (_c) calls:
 * 2^31 + 4096 bytes written and read back in one MPI_File_write_at_c /
 * read_at_c, and the same collectively (write_at_all_c / read_at_all_c).
 * Each moves 2 GiB through memory and the page cache, so the test is left
 * out of the suite (tag manual); tools/soak.sh runs it. One rank. */
#include "mpiio_test.h"

static const MPI_Count kBytes = ((MPI_Count)1 << 31) + 4096;

static char pattern(MPI_Count i) { return (char)(1 + (i * 131 + i / 4093) % 251); }

static void round_trip(MPI_File fh, char* data, int collective) {
  for (MPI_Count i = 0; i < kBytes; ++i) data[i] = pattern(i);
  MPI_Status status;
  if (collective) {
    MPI_CHECK(MPI_File_write_at_all_c(fh, 0, data, kBytes, MPI_BYTE, &status));
  } else {
    MPI_CHECK(MPI_File_write_at_c(fh, 0, data, kBytes, MPI_BYTE, &status));
  }
  MPI_Count count = 0;
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &count));
  CHECK_EQ(count, kBytes);
  memset(data, 0, (size_t)kBytes);
  if (collective) {
    MPI_CHECK(MPI_File_read_at_all_c(fh, 0, data, kBytes, MPI_BYTE, &status));
  } else {
    MPI_CHECK(MPI_File_read_at_c(fh, 0, data, kBytes, MPI_BYTE, &status));
  }
  MPI_CHECK(MPI_Get_count_c(&status, MPI_BYTE, &count));
  CHECK_EQ(count, kBytes);
  for (MPI_Count i = 0; i < kBytes; ++i) {
    if (data[i] != pattern(i)) CHECK_EQ(i, -1);
  }
  t_report("%s: %lld bytes written and read back", collective ? "collective" : "independent",
           (long long)kBytes);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "large_count");
  char path[4096];
  t_path(path, sizeof path, "large_count.dat");
  char* data = malloc((size_t)kBytes);
  CHECK(data != NULL);
  MPI_File fh;
  t_open("large_count.dat", &fh);
  round_trip(fh, data, 0);
  round_trip(fh, data, 1);
  MPI_Offset size = 0;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, kBytes);
  MPI_CHECK(MPI_File_close(&fh));
  free(data);
  if (t_rank == 0) unlink(path);
  return t_finish();
}
