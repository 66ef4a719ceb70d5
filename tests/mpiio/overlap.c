/* Overlapping etypes and filetypes, which MPI allows on a file not opened
 * for writing (MPI 4.1, 14.3): a filetype whose second block lies inside
 * its first ([0, 12) then [4, 8) of ints), and an etype of that shape, read
 * through every kind of read call; on a file opened for writing both are
 * refused (MPI_ERR_IO, ROMIO's class), and decreasing displacements are
 * refused everywhere. */
#include "mpiio_test.h"

enum { INTS_PER_RANK = 96, READ = 12 };

static MPI_Datatype overlapping_ints(void) {
  const int lengths[] = {3, 1};
  const int displacements[] = {0, 1};
  MPI_Datatype type;
  MPI_CHECK(MPI_Type_indexed(2, lengths, displacements, MPI_INT, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  return type;
}

/* Stream element k of the view at displacement `first` ints: tile k / 4
 * holds ints 3t, 3t + 1, 3t + 2, 3t + 1 after `first`. */
static int expected(int first, int k) {
  const int tile = k / 4, within = k % 4;
  return first + 3 * tile + (within == 3 ? 1 : within);
}

static int all_expected(const int* values, int count, int first, int from) {
  for (int i = 0; i < count; ++i)
    if (values[i] != expected(first, from + i)) return 0;
  return 1;
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "overlap");
  char path[4096];
  t_path(path, sizeof path, "overlap.dat");
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh));
  int mine[INTS_PER_RANK];
  for (int i = 0; i < INTS_PER_RANK; ++i) mine[i] = t_rank * INTS_PER_RANK + i;
  MPI_CHECK(MPI_File_write_at_all(fh, (MPI_Offset)t_rank * INTS_PER_RANK * sizeof(int), mine,
                                  INTS_PER_RANK, MPI_INT, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Datatype overlap = overlapping_ints();
  /* One refusal per open: MPICH 4.0.2 crashes on the next set_view of a
   * file whose set_view failed. */
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  t_report("write-only file, overlapping filetype: %s",
           t_class_name(t_class_of(
               MPI_File_set_view(fh, 0, MPI_INT, overlap, "native", MPI_INFO_NULL))));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  t_report("read-write file, overlapping etype: %s",
           t_class_name(t_class_of(
               MPI_File_set_view(fh, 0, overlap, overlap, "native", MPI_INFO_NULL))));
  MPI_CHECK(MPI_File_close(&fh));

  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  /* Each rank's view starts at its own part of the file. */
  const int first = t_rank * INTS_PER_RANK;
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)first * sizeof(int), MPI_INT, overlap, "native",
                              MPI_INFO_NULL));
  int got[READ];
  MPI_Status status;
  memset(got, 0, sizeof got);
  /* At a tile's start: MPICH 4.0.2's read_at from inside an overlapping
   * tile returns wrong data (tests/api/read_only_overlap_test.cc covers
   * flowio there). */
  MPI_CHECK(MPI_File_read_at(fh, 4, got, READ, MPI_INT, &status));
  const int at_ok = t_count(&status, MPI_INT) == READ && all_expected(got, READ, first, 4);
  memset(got, 0, sizeof got);
  MPI_CHECK(MPI_File_read_all(fh, got, READ, MPI_INT, &status));
  const int all_ok = t_count(&status, MPI_INT) == READ && all_expected(got, READ, first, 0);
  memset(got, 0, sizeof got);
  MPI_CHECK(MPI_File_read_at_all(fh, 5, got, READ, MPI_INT, &status));
  const int at_all_ok = t_count(&status, MPI_INT) == READ && all_expected(got, READ, first, 5);
  memset(got, 0, sizeof got);
  MPI_Request request;
  MPI_CHECK(MPI_File_iread(fh, got, READ, MPI_INT, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  const int iread_ok = t_count(&status, MPI_INT) == READ && all_expected(got, READ, first, READ);
  t_report("overlapping filetype: read_at %s, read_all %s, read_at_all %s, iread %s",
           at_ok ? "ok" : "WRONG", all_ok ? "ok" : "WRONG", at_all_ok ? "ok" : "WRONG",
           iread_ok ? "ok" : "WRONG");

  /* The overlapping type as etype too: one etype is its 4 ints. */
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)first * sizeof(int), overlap, overlap, "native",
                              MPI_INFO_NULL));
  memset(got, 0, sizeof got);
  MPI_CHECK(MPI_File_read_at_all(fh, 1, got, 8, MPI_INT, &status));
  t_report("overlapping etype: read_at_all %s",
           t_count(&status, MPI_INT) == 8 && all_expected(got, 8, first, 4) ? "ok" : "WRONG");

  const int ones[] = {1, 1};
  const int decreasing[] = {3, 0};
  MPI_Datatype backwards;
  MPI_CHECK(MPI_Type_indexed(2, ones, decreasing, MPI_INT, &backwards));
  MPI_CHECK(MPI_Type_commit(&backwards));
  t_report("read-only file, decreasing filetype: %s",
           t_class_name(t_class_of(
               MPI_File_set_view(fh, 0, MPI_INT, backwards, "native", MPI_INFO_NULL))));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&overlap);
  MPI_Type_free(&backwards);
  return t_finish();
}
