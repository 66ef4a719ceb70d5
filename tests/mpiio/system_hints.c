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
#include "hints_test.h"

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
  t_report_info_keys(used, when, kKeys, sizeof kKeys / sizeof kKeys[0]);
  MPI_CHECK(MPI_Info_free(&used));
}

/* A collective write through an interleaving view, read back and checked. */
static void write_and_check(MPI_File fh, int pass) {
  t_write_interleaved_and_check(fh, pass, BLOCK, BLOCKS);
  t_report("pass %d: write_all and read_at_all of %d ints per rank verified", pass, BLOCK * BLOCKS);
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
