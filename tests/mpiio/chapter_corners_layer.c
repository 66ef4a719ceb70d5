/* Corners of the MPI 4.1 I/O chapter where MPICH 4.0.2's MPI-IO answers
 * otherwise than the standard, so there is no MPICH run to compare with:
 * the layer alone, checking itself.
 *   - MPI_File_sync on a file opened read-only succeeds (sync, barrier,
 *     sync is how a reader sees other processes' writes; MPICH says
 *     MPI_ERR_READ_ONLY);
 *   - a read of a type with holes in memory cut short by the end of file
 *     reports what was read (MPICH reports the whole count), independent
 *     and collective;
 *   - MPI_File_get_view names "internal" as set (MPICH says "native");
 *   - MPI_File_preallocate on a read-only file is MPI_ERR_READ_ONLY (MPICH:
 *     MPI_ERR_IO from the failed fallocate);
 *   - set_atomicity with flags that differ fails on every process, and no
 *     process changes mode (MPICH fails only where the flag differs from
 *     rank 0's and changes the others).
 *
 * Output: corners_layer.dat, 16 bytes. */
#include "mpiio_test.h"

struct pair {
  int i;
  double d;
};

static void check_short_read(int code, const MPI_Status* status, MPI_Datatype pair_type) {
  MPI_CHECK(code);
  int count = -2, elements = -2, bytes = -2;
  MPI_CHECK(MPI_Get_count(status, pair_type, &count));
  MPI_CHECK(MPI_Get_elements(status, pair_type, &elements));
  MPI_CHECK(MPI_Get_count(status, MPI_BYTE, &bytes));
  CHECK_EQ(count, MPI_UNDEFINED);
  CHECK_EQ(elements, 3); /* the first pair and the int of the second */
  CHECK_EQ(bytes, 16);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "chapter_corners_layer");
  char path[4096];
  MPI_File fh = MPI_FILE_NULL;
  t_open_path("corners_layer.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, path, sizeof path, &fh);
  char bytes[16];
  for (int i = 0; i < 16; ++i) bytes[i] = (char)i;
  if (t_rank == 0) MPI_CHECK(MPI_File_write_at(fh, 0, bytes, 16, MPI_BYTE, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_File_close(&fh));

  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  MPI_CHECK(MPI_File_sync(fh));
  CHECK_EQ(t_class_of(MPI_File_preallocate(fh, 100)), MPI_ERR_READ_ONLY);
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, 16);

  const int lengths[2] = {1, 1};
  const MPI_Aint where[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype pair_type;
  MPI_CHECK(MPI_Type_create_struct(2, lengths, where, types, &pair_type));
  MPI_CHECK(MPI_Type_commit(&pair_type));
  struct pair pairs[2];
  MPI_Status status;
  t_garble(&status);
  check_short_read(MPI_File_read_at(fh, 0, pairs, 2, pair_type, &status), &status, pair_type);
  int first = 0;
  memcpy(&first, bytes, sizeof first);
  CHECK_EQ(pairs[0].i, first);
  t_garble(&status);
  check_short_read(MPI_File_read_at_all(fh, 0, pairs, 2, pair_type, &status), &status, pair_type);
  MPI_Type_free(&pair_type);

  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "internal", MPI_INFO_NULL));
  char datarep[MPI_MAX_DATAREP_STRING] = "";
  MPI_Offset disp = -1;
  MPI_Datatype etype, filetype;
  MPI_CHECK(MPI_File_get_view(fh, &disp, &etype, &filetype, datarep));
  CHECK(strcmp(datarep, "internal") == 0);

  CHECK_EQ(t_class_of(MPI_File_set_atomicity(fh, t_rank == t_nranks - 1)), MPI_ERR_ARG);
  int flag = -1;
  MPI_CHECK(MPI_File_get_atomicity(fh, &flag));
  CHECK_EQ(flag, 0);
  MPI_CHECK(MPI_File_close(&fh));
  t_report(
      "sync on read-only, short reads with holes, \"internal\" named, preallocate "
      "read-only, atomicity not same: as MPI says");
  return t_finish();
}
