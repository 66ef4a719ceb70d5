/* MPI_MODE_SEQUENTIAL and MPI_DISPLACEMENT_CURRENT: a file written and read
 * only through the shared file pointer, whose views start where that
 * pointer is. Rank 0 writes a header with write_shared; every rank then
 * sets an int view at MPI_DISPLACEMENT_CURRENT (just past the header) and
 * writes with write_ordered and a split ordered write; the file is reopened
 * read-only and sequential and read back the same way. The calls MPI calls
 * erroneous on a sequential file (explicit offsets, individual pointers,
 * seeks, positions) and the invalid combinations fail with ROMIO's error
 * classes, which both runs print. */
#include "mpiio_test.h"

enum { HEADER = 24, FIRST = 3, SECOND = 2 };

static int value_of(int rank, int index) { return 1000 * (rank + 1) + index; }

static void open_sequential(int amode, MPI_File* fh) {
  char path[4096];
  t_path(path, sizeof path, "sequential.dat");
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, amode | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, fh));
}

/* The view's displacement after set_view with MPI_DISPLACEMENT_CURRENT. */
static MPI_Offset set_current_view(MPI_File fh, MPI_Datatype type) {
  MPI_CHECK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, type, type, "native", MPI_INFO_NULL));
  MPI_Offset displacement = -1;
  MPI_Datatype etype, filetype;
  char datarep[MPI_MAX_DATAREP_STRING];
  MPI_CHECK(MPI_File_get_view(fh, &displacement, &etype, &filetype, datarep));
  return displacement;
}

/* Every call MPI forbids on a sequential file, each answered with an error. */
static void report_refusals(MPI_File fh) {
  int value = 0;
  MPI_Offset offset = 0;
  MPI_Status status;
  t_report("write_at: %s", t_class_name(t_class_of(MPI_File_write_at(fh, 0, &value, 1, MPI_INT,
                                                                       &status))));
  t_report("write: %s", t_class_name(t_class_of(MPI_File_write(fh, &value, 1, MPI_INT, &status))));
  t_report("write_all: %s",
           t_class_name(t_class_of(MPI_File_write_all(fh, &value, 1, MPI_INT, &status))));
  t_report("seek: %s", t_class_name(t_class_of(MPI_File_seek(fh, 0, MPI_SEEK_SET))));
  t_report("get_position: %s", t_class_name(t_class_of(MPI_File_get_position(fh, &offset))));
  t_report("get_byte_offset: %s",
           t_class_name(t_class_of(MPI_File_get_byte_offset(fh, 0, &offset))));
  t_report("seek_shared: %s", t_class_name(t_class_of(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET))));
  t_report("get_position_shared: %s",
           t_class_name(t_class_of(MPI_File_get_position_shared(fh, &offset))));
  t_report("set_view at 0: %s",
           t_class_name(t_class_of(
               MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL))));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "sequential");
  MPI_File fh;
  /* Writing. */
  open_sequential(MPI_MODE_CREATE | MPI_MODE_WRONLY, &fh);
  t_report("first view at %lld", (long long)set_current_view(fh, MPI_BYTE));
  if (t_rank == 0) {
    char header[HEADER];
    memset(header, 0, sizeof header);
    snprintf(header, sizeof header, "sequential, %d ranks", t_nranks);
    MPI_CHECK(MPI_File_write_shared(fh, header, HEADER, MPI_CHAR, MPI_STATUS_IGNORE));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t_report("int view at %lld", (long long)set_current_view(fh, MPI_INT));
  int first[FIRST], second[SECOND];
  for (int i = 0; i < FIRST; ++i) first[i] = value_of(t_rank, i);
  for (int i = 0; i < SECOND; ++i) second[i] = value_of(t_rank, FIRST + i);
  MPI_Status status;
  MPI_CHECK(MPI_File_write_ordered(fh, first, FIRST, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), FIRST);
  MPI_CHECK(MPI_File_write_ordered_begin(fh, second, SECOND, MPI_INT));
  MPI_CHECK(MPI_File_write_ordered_end(fh, second, &status));
  report_refusals(fh);
  MPI_CHECK(MPI_File_close(&fh));

  /* Reading, the same way. */
  open_sequential(MPI_MODE_RDONLY, &fh);
  t_report("reopened, first view at %lld", (long long)set_current_view(fh, MPI_BYTE));
  if (t_rank == 0) {
    char header[HEADER];
    MPI_CHECK(MPI_File_read_shared(fh, header, HEADER, MPI_CHAR, &status));
    CHECK_EQ(t_count(&status, MPI_CHAR), HEADER);
    t_say("header: %s", header);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t_report("reopened, int view at %lld", (long long)set_current_view(fh, MPI_INT));
  int got[FIRST + SECOND];
  memset(got, 0, sizeof got);
  MPI_CHECK(MPI_File_read_ordered(fh, got, FIRST, MPI_INT, &status));
  MPI_CHECK(MPI_File_read_ordered_begin(fh, got + FIRST, SECOND, MPI_INT));
  MPI_CHECK(MPI_File_read_ordered_end(fh, got + FIRST, &status));
  CHECK_EQ(t_count(&status, MPI_INT), SECOND);
  int right = 1;
  for (int i = 0; i < FIRST + SECOND; ++i) right = right && got[i] == value_of(t_rank, i);
  t_report("read_ordered got %s", right ? "what write_ordered wrote" : "WRONG DATA");
  report_refusals(fh);
  MPI_CHECK(MPI_File_close(&fh));

  /* Combinations MPI rules out. */
  char path[4096];
  t_path(path, sizeof path, "sequential.dat");
  MPI_File bad = MPI_FILE_NULL;
  t_report("open rdwr|sequential: %s",
           t_class_name(t_class_of(MPI_File_open(MPI_COMM_WORLD, path,
                                                 MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                                                 MPI_INFO_NULL, &bad))));
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  t_report("displacement_current on a random-access file: %s",
           t_class_name(t_class_of(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT,
                                                     MPI_INT, "native", MPI_INFO_NULL))));
  MPI_CHECK(MPI_File_close(&fh));
  return t_finish();
}
