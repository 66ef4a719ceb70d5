/* Hints: open with ROMIO hints and an unknown key, MPI_File_get_info,
 * MPI_File_set_info, and collective writes that are still correct.
 *
 * Only cb_buffer_size, cb_nodes and the absence of the unknown key are
 * printed: the other keys and values MPI_File_get_info reports are the
 * implementation's own and legitimately differ. romio_cb_pfr=enable is not
 * tried: it crashes MPICH 4.0.2.
 *
 * Output: hints.dat, ints interleaved in blocks of 8 between ranks. */
#include "mpiio_test.h"

enum { BLOCK = 8, BLOCKS = 64 };

static int value(int rank, int pass, int index) { return 1000000 * pass + 10000 * rank + index; }

/* `key` of `info` into `text` ("(absent)" if it is not there). */
static void info_value(MPI_Info info, const char* key, char* text, int size) {
  int flag = 0;
  MPI_CHECK(MPI_Info_get(info, key, size - 1, text, &flag));
  if (!flag) snprintf(text, (size_t)size, "(absent)");
}

/* Collective: prints what the file's info says about the three keys. */
static void report_info(MPI_File fh, const char* when) {
  MPI_Info used = MPI_INFO_NULL;
  MPI_CHECK(MPI_File_get_info(fh, &used));
  CHECK(used != MPI_INFO_NULL);
  char buffer_size[MPI_MAX_INFO_VAL], nodes[MPI_MAX_INFO_VAL], unknown[MPI_MAX_INFO_VAL];
  info_value(used, "cb_buffer_size", buffer_size, sizeof buffer_size);
  info_value(used, "cb_nodes", nodes, sizeof nodes);
  info_value(used, "no_such_hint_xyz", unknown, sizeof unknown);
  int keys = 0;
  MPI_CHECK(MPI_Info_get_nkeys(used, &keys));
  CHECK(keys >= 2);
  MPI_CHECK(MPI_Info_free(&used));
  t_report("%s: cb_buffer_size=%s cb_nodes=%s no_such_hint_xyz %s", when, buffer_size, nodes,
           strcmp(unknown, "(absent)") == 0 ? "absent" : "present");
}

/* A collective write of BLOCKS blocks per rank through an interleaving
 * view, read back collectively and checked. */
static void write_and_check(MPI_File fh, int pass) {
  const int n = t_nranks, count = BLOCK * BLOCKS;
  int* data = malloc(sizeof(int) * count);
  int* back = malloc(sizeof(int) * count);
  CHECK(data && back);
  for (int i = 0; i < count; ++i) data[i] = value(t_rank, pass, i);
  MPI_Datatype block, filetype;
  MPI_Type_contiguous(BLOCK, MPI_INT, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)sizeof(int) * BLOCK * n, &filetype);
  MPI_Type_commit(&filetype);
  MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * BLOCK * t_rank, MPI_INT, filetype,
                              "native", MPI_INFO_NULL));
  MPI_Status status;
  MPI_CHECK(MPI_File_write_all(fh, data, count, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), count);
  MPI_CHECK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_CHECK(MPI_File_sync(fh));
  memset(back, 0, sizeof(int) * count);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, back, count, MPI_INT, &status));
  CHECK_EQ(t_count(&status, MPI_INT), count);
  for (int i = 0; i < count; ++i) CHECK_EQ(back[i], data[i]);
  /* And the raw layout, through a contiguous view. */
  MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int raw[BLOCK];
  for (int b = 0; b < BLOCKS; b += 7) {
    int owner = (t_rank + b) % n;
    MPI_CHECK(
        MPI_File_read_at(fh, ((MPI_Offset)b * n + owner) * BLOCK, raw, BLOCK, MPI_INT, &status));
    for (int i = 0; i < BLOCK; ++i) CHECK_EQ(raw[i], value(owner, pass, b * BLOCK + i));
  }
  MPI_Type_free(&filetype);
  MPI_Type_free(&block);
  free(back);
  free(data);
  t_report("pass %d: write_all of %d ints per rank through an interleaving view verified", pass,
           count);
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
