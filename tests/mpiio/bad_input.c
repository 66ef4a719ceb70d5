/* Bad input that MPICH 4.0.2's own MPI-IO answers sanely, so that the
 * layer is held to the same answers (run_with_and_without_layer.sh compares
 * the runs): an etype only partly accessed, an overlapping filetype, a
 * displacement that is no multiple of the etype (valid: MPI counts it in
 * bytes), reading past the end (a short count, not an error), and a file
 * handle used after MPI_File_close freed it. The bad input MPICH crashes on,
 * hangs on or accepts (null buffers, counts that overflow, freed
 * datatypes, nonsense hints, collective arguments bad on one rank) is in
 * bad_input_layer.c, run with the layer only.
 *
 * Outputs: bad_input.dat (each rank's int at byte 3 + 4 * rank, after
 * three bytes of zeros). */
#include "mpiio_test.h"

/* Collective: prints the class of the error `code` under `label`. */
static void expect_error(const char* label, int code) {
  CHECK(code != MPI_SUCCESS);
  t_report("%-58s %s", label, t_class_name(t_class_of(code)));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "bad_input");
  MPI_File fh = MPI_FILE_NULL;
  t_open("bad_input.dat", &fh);
  MPI_Status status;
  char bytes[8] = {0};

  t_doing("a part of an etype");
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  expect_error("write_at of 3 bytes, etype MPI_INT",
               MPI_File_write_at(fh, 0, bytes, 3, MPI_BYTE, &status));
  expect_error("read_at of 6 bytes, etype MPI_INT",
               MPI_File_read_at(fh, 0, bytes, 6, MPI_BYTE, &status));
  expect_error("write_all of 5 bytes, etype MPI_INT (every rank)",
               MPI_File_write_all(fh, bytes, 5, MPI_BYTE, &status));

  t_doing("an overlapping filetype");
  MPI_Datatype overlapping;
  const int lengths[2] = {2, 2};
  const MPI_Aint offsets[2] = {0, 4};
  MPI_Type_create_hindexed(2, lengths, offsets, MPI_INT, &overlapping);
  MPI_Type_commit(&overlapping);
  expect_error("set_view filetype with overlapping blocks",
               MPI_File_set_view(fh, 0, MPI_INT, overlapping, "native", MPI_INFO_NULL));
  MPI_Type_free(&overlapping);

  t_doing("a displacement of 3 with etype MPI_INT");
  MPI_CHECK(MPI_File_set_view(fh, 3, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int value = 1000 + t_rank;
  MPI_CHECK(MPI_File_write_at_all(fh, t_rank, &value, 1, MPI_INT, &status));
  t_make_visible(fh);
  int back = -1;
  MPI_CHECK(MPI_File_read_at(fh, t_rank, &back, 1, MPI_INT, &status));
  CHECK_EQ(back, value);

  t_doing("reading past the end");
  int past[4] = {-1, -1, -1, -1};
  MPI_CHECK(MPI_File_read_at(fh, t_nranks - 1, past, 4, MPI_INT, &status));
  t_report("%-58s %d ints", "read_at of 4 ints from the last int", t_count(&status, MPI_INT));
  MPI_CHECK(MPI_File_read_at(fh, t_nranks + 10, past, 4, MPI_INT, &status));
  t_report("%-58s %d ints", "read_at of 4 ints past the end", t_count(&status, MPI_INT));

  t_doing("a handle used after close");
  MPI_File stale = fh;
  MPI_CHECK(MPI_File_close(&fh));
  CHECK(fh == MPI_FILE_NULL);
  expect_error("write_at on a closed file's handle",
               MPI_File_write_at(stale, 0, &value, 1, MPI_INT, &status));
  expect_error("close of a closed file's handle", MPI_File_close(&stale));
  return t_finish();
}
