/* The system hints file that ROMIO_HINTS names, as unmodified MPI-IO
 * programs use it: the file's hints are applied at every open (a key
 * repeated keeps its first value, malformed lines are skipped), the
 * program's own hints override the file's, MPI_File_get_info reports the
 * result, and collective I/O under those hints is right.
 *
 * The file is read at the first open (flowio reads it once per process),
 * so ROMIO_HINTS is set before it. Printed: the four keys the file sets;
 * their values are what both MPICH's MPI-IO and the layer must report.
 *
 * Output: system_hints.txt (the hints file), system_hints.dat (ints
 * interleaved in blocks of 8 between ranks). */
#include "mpiio_test.h"

enum { BLOCK = 8, BLOCKS = 32 };

static const char* const kHintsFile =
    "# site hints for every file\n"
    "cb_buffer_size 1048576\n"
    "ind_rd_buffer_size 49\n"
    "ind_rd_buffer_size 60\n"
    "ind_wr_buffer_size 4096\n"
    "romio_no_indep_rw true\n"
    "lonely\n"
    "three words here\n";

static const char* const kKeys[] = {"cb_buffer_size", "ind_rd_buffer_size", "ind_wr_buffer_size",
                                    "romio_no_indep_rw"};

/* Collective: prints the values of kKeys the file's info reports. */
static void report_info(MPI_File fh, const char* when) {
  MPI_Info used = MPI_INFO_NULL;
  MPI_CHECK(MPI_File_get_info(fh, &used));
  char line[1024] = "";
  for (size_t k = 0; k < sizeof kKeys / sizeof kKeys[0]; ++k) {
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_CHECK(MPI_Info_get(used, kKeys[k], MPI_MAX_INFO_VAL, value, &flag));
    size_t at = strlen(line);
    snprintf(line + at, sizeof line - at, " %s=%s", kKeys[k], flag ? value : "(absent)");
  }
  MPI_CHECK(MPI_Info_free(&used));
  t_report("%s:%s", when, line);
}

/* A collective write through an interleaving view, read back and checked. */
static void write_and_check(MPI_File fh, int pass) {
  const int count = BLOCK * BLOCKS;
  int data[BLOCK * BLOCKS], back[BLOCK * BLOCKS];
  for (int i = 0; i < count; ++i) data[i] = 1000000 * pass + 10000 * t_rank + i;
  MPI_Datatype block, filetype;
  MPI_Type_contiguous(BLOCK, MPI_INT, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)sizeof(int) * BLOCK * t_nranks, &filetype);
  MPI_Type_commit(&filetype);
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * BLOCK * t_rank, MPI_INT, filetype,
                              "native", MPI_INFO_NULL));
  MPI_Status status;
  MPI_CHECK(MPI_File_write_all(fh, data, count, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), count);
  MPI_CHECK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_CHECK(MPI_File_sync(fh));
  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, back, count, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), count);
  for (int i = 0; i < count; ++i) CHECK_EQ(back[i], data[i]);
  MPI_Type_free(&filetype);
  MPI_Type_free(&block);
  t_report("pass %d: write_all and read_at_all of %d ints per rank verified", pass, count);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "system_hints");
  char hints_path[4096], path[4096];
  t_path(hints_path, sizeof hints_path, "system_hints.txt");
  t_path(path, sizeof path, "system_hints.dat");
  if (t_rank == 0) {
    FILE* out = fopen(hints_path, "w");
    CHECK(out != NULL);
    fputs(kHintsFile, out);
    CHECK(fclose(out) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(setenv("ROMIO_HINTS", hints_path, 1) == 0);

  /* The file's hints, one of them overridden by the program. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "ind_wr_buffer_size", "8192");
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  report_info(fh, "open(ind_wr_buffer_size=8192)");
  write_and_check(fh, 0);
  MPI_CHECK(MPI_File_close(&fh));

  /* Reopened with more of the file's keys overridden. */
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_no_indep_rw", "false");
  MPI_Info_set(info, "ind_rd_buffer_size", "1000");
  MPI_Info_set(info, "cb_buffer_size", "65536");
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  report_info(fh, "open(romio_no_indep_rw=false ind_rd_buffer_size=1000 cb_buffer_size=65536)");
  write_and_check(fh, 1);
  MPI_CHECK(MPI_File_close(&fh));

  /* No hints of its own: the file's alone. */
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  report_info(fh, "open(no hints)");
  MPI_CHECK(MPI_File_close(&fh));
  return t_finish();
}
