/* Hints: open with ROMIO hints and an unknown key, MPI_File_get_info,
 * MPI_File_set_info, and collective writes that are still correct.
 *
 * Only cb_buffer_size, cb_nodes and the unknown key are printed
 * (t_report_info_keys says why). romio_cb_pfr=enable is not tried: it
 * crashes MPICH 4.0.2.
 *
 * Output: hints.dat, ints interleaved in blocks of 8 between ranks. */
#include "hints_test.h"

enum { BLOCK = 8, BLOCKS = 64 };

static const char* const kKeys[] = {"cb_buffer_size", "cb_nodes", "no_such_hint_xyz"};

/* Collective: prints what the file's info says about kKeys. */
static void report_info(MPI_File fh, const char* when) {
  MPI_Info used = MPI_INFO_NULL;
  MPI_CHECK(MPI_File_get_info(fh, &used));
  CHECK(used != MPI_INFO_NULL);
  int keys = 0;
  MPI_CHECK(MPI_Info_get_nkeys(used, &keys));
  CHECK(keys >= 2);
  t_report_info_keys(used, when, kKeys, sizeof kKeys / sizeof kKeys[0]);
  MPI_CHECK(MPI_Info_free(&used));
}

/* A collective write of BLOCKS blocks per rank through an interleaving
 * view, read back collectively and checked, then the raw layout read
 * through a contiguous view. */
static void write_and_check(MPI_File fh, int pass) {
  t_write_interleaved_and_check(fh, pass, BLOCK, BLOCKS);
  const int n = t_nranks;
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int raw[BLOCK];
  MPI_Status status;
  for (int b = 0; b < BLOCKS; b += 7) {
    int owner = (t_rank + b) % n;
    MPI_CHECK(
        MPI_File_read_at(fh, ((MPI_Offset)b * n + owner) * BLOCK, raw, BLOCK, MPI_INT, &status));
    for (int i = 0; i < BLOCK; ++i)
      CHECK_EQ(raw[i], t_interleaved_value(owner, pass, b * BLOCK + i));
  }
  t_report("pass %d: write_all of %d ints per rank through an interleaving view verified", pass,
           BLOCK * BLOCKS);
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "hints");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", "1048576");
  MPI_Info_set(info, "cb_nodes", "1");
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_Info_set(info, "romio_ds_write", "disable");
  MPI_Info_set(info, "striping_unit", "65536");
  MPI_Info_set(info, "no_such_hint_xyz", "42");
  char path[4096];
  t_path(path, sizeof path, "hints.dat");
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  report_info(fh, "after open");
  write_and_check(fh, 0);

  /* set_info after open: a new buffer size, an unknown key again. */
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", "2097152");
  MPI_Info_set(info, "no_such_hint_xyz", "43");
  MPI_CHECK(MPI_File_set_info(fh, info));
  MPI_Info_free(&info);
  report_info(fh, "after set_info(cb_buffer_size=2097152)");
  write_and_check(fh, 1);
  /* set_info with MPI_INFO_NULL is allowed and changes nothing. */
  MPI_CHECK(MPI_File_set_info(fh, MPI_INFO_NULL));
  report_info(fh, "after set_info(MPI_INFO_NULL)");
  MPI_CHECK(MPI_File_close(&fh));

  /* Reopened without hints: the file holds every rank's data. */
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  MPI_Offset size = -1;
  MPI_CHECK(MPI_File_get_size(fh, &size));
  CHECK_EQ(size, (MPI_Offset)sizeof(int) * BLOCK * BLOCKS * t_nranks);
  MPI_CHECK(MPI_File_close(&fh));
  t_report("reopened without hints: size %lld", (long long)size);
  return t_finish();
}
