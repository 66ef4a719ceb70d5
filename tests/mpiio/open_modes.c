/* Open modes: the checkpoint a simulation writes first (every rank's
 * doubles interleaved through a vector view, write_all) into files opened
 * write-only in every mode MPI offers, with the hints that select each I/O
 * method, read back through a read-only handle; independent writes to a
 * write-only file; and a read-only file, on which every write fails with
 * MPI_ERR_READ_ONLY on every rank and nothing changes.
 *
 * New files are written without holes between the ranks' doubles: where a
 * write leaves holes past the end of a new file, MPICH 4.0.2 fills them
 * with garbage when it sieves (flowio leaves zeros), so the runs' files
 * would differ for MPICH's fault. Files that exist before open are written
 * with holes, which keep their bytes.
 *
 * Outputs: modes_<mode>_<hints>.dat for each write-only mode and hint set
 * (none for delete_on_close, which the program checks is gone), and
 * modes_independent.dat, modes_readonly.dat. */
#include <unistd.h>

#include "mpiio_test.h"

enum { DOUBLES = 4096 };

/* A file of background bytes, written by rank 0 with plain MPI-IO calls
 * independent of the mode under test. */
static void write_background(const char* path) {
  if (t_rank == 0) {
    enum { BYTES = DOUBLES * 8 * 2 * 8 };
    static unsigned char bytes[BYTES];
    unsigned state = 12345;
    for (int i = 0; i < BYTES; ++i) {
      state = state * 1103515245u + 12345u;
      bytes[i] = (unsigned char)(state >> 16);
    }
    MPI_File fh;
    MPI_CHECK(
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_write_at(fh, 0, bytes, BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_File_close(&fh));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static MPI_Datatype interleaving(int stride) {
  MPI_Datatype filetype;
  MPI_Type_vector(DOUBLES, 1, stride, MPI_DOUBLE, &filetype);
  MPI_Type_commit(&filetype);
  return filetype;
}

static void fill(double* data) {
  for (int i = 0; i < DOUBLES; ++i) data[i] = t_rank * 1e6 + i + 0.5;
}

/* Reads the rank's doubles back through a read-only handle and reports
 * whether they are the ones written. */
static void read_back(const char* path, int stride, const char* label) {
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  MPI_Datatype filetype = interleaving(stride);
  MPI_CHECK(
      MPI_File_set_view(fh, (MPI_Offset)t_rank * 8, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL));
  static double expected[DOUBLES], back[DOUBLES];
  fill(expected);
  MPI_Status status;
  MPI_CHECK(MPI_File_read_all(fh, back, DOUBLES, MPI_DOUBLE, &status));
  int same = t_count(&status, MPI_DOUBLE) == DOUBLES;
  for (int i = 0; i < DOUBLES; ++i) same = same && back[i] == expected[i];
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&filetype);
  t_report("%s: read back %s", label, same ? "as written" : "WRONG");
}

struct Mode {
  int amode;
  int exists;
  const char* name;
};

static void write_only_checkpoint(const struct Mode* mode, const char* hint_key,
                                  const char* hint_value) {
  char name[256], path[4096], label[512];
  snprintf(name, sizeof name, "modes_%s_%s.dat", mode->name, hint_value ? hint_value : "defaults");
  t_path(path, sizeof path, name);
  snprintf(label, sizeof label, "%s %s=%s", mode->name, hint_key ? hint_key : "hints",
           hint_value ? hint_value : "defaults");
  if (mode->exists) write_background(path);
  const int stride = mode->exists ? t_nranks + 1 : t_nranks;
  MPI_Info info = MPI_INFO_NULL;
  if (hint_key) {
    MPI_Info_create(&info);
    MPI_Info_set(info, hint_key, hint_value);
  }
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, mode->amode, info, &fh));
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  int amode = 0;
  MPI_CHECK(MPI_File_get_amode(fh, &amode));
  CHECK_EQ(amode, mode->amode);
  MPI_Datatype filetype = interleaving(stride);
  MPI_CHECK(
      MPI_File_set_view(fh, (MPI_Offset)t_rank * 8, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL));
  static double data[DOUBLES];
  fill(data);
  MPI_Status status;
  t_garble(&status);
  MPI_CHECK(MPI_File_write_all(fh, data, DOUBLES, MPI_DOUBLE, &status));
  CHECK_EQ(t_count(&status, MPI_DOUBLE), DOUBLES);
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&filetype);
  if (mode->amode & MPI_MODE_DELETE_ON_CLOSE) {
    MPI_Barrier(MPI_COMM_WORLD);
    t_report("%s: file %s after close", label, access(path, F_OK) == 0 ? "kept" : "removed");
    return;
  }
  read_back(path, stride, label);
}

/* Independent writes through the view with holes, two of them in flight. */
static void independent_writes(void) {
  char path[4096];
  t_path(path, sizeof path, "modes_independent.dat");
  write_background(path);
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  const int stride = t_nranks + 1;
  MPI_Datatype filetype = interleaving(stride);
  MPI_CHECK(
      MPI_File_set_view(fh, (MPI_Offset)t_rank * 8, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL));
  static double data[DOUBLES];
  fill(data);
  MPI_Request requests[2];
  MPI_CHECK(MPI_File_iwrite_at(fh, 0, data, DOUBLES / 2, MPI_DOUBLE, &requests[0]));
  MPI_CHECK(MPI_File_iwrite_at(fh, DOUBLES / 2, data + DOUBLES / 2, DOUBLES / 2, MPI_DOUBLE,
                               &requests[1]));
  MPI_Status statuses[2];
  MPI_CHECK(MPI_Waitall(2, requests, statuses));
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&filetype);
  read_back(path, stride, "wronly independent iwrite_at");
}

/* Every write form on a read-only file fails at the call on every rank. */
static void read_only_refuses_writes(void) {
  char path[4096];
  t_path(path, sizeof path, "modes_readonly.dat");
  write_background(path);
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  static double data[DOUBLES];
  fill(data);
  const MPI_Offset offset = (MPI_Offset)t_rank * DOUBLES * 8;
  MPI_Request request = MPI_REQUEST_NULL;
  const int write_all =
      t_class_of(MPI_File_write_all(fh, data, DOUBLES, MPI_DOUBLE, MPI_STATUS_IGNORE));
  const int write_at_all =
      t_class_of(MPI_File_write_at_all(fh, offset, data, DOUBLES, MPI_DOUBLE, MPI_STATUS_IGNORE));
  const int write_at =
      t_class_of(MPI_File_write_at(fh, offset, data, DOUBLES, MPI_DOUBLE, MPI_STATUS_IGNORE));
  const int iwrite_at =
      t_class_of(MPI_File_iwrite_at(fh, offset, data, DOUBLES, MPI_DOUBLE, &request));
  t_report("rdonly: write_all %s, write_at_all %s, write_at %s, iwrite_at %s",
           t_class_name(write_all), t_class_name(write_at_all), t_class_name(write_at),
           t_class_name(iwrite_at));
  CHECK(request == MPI_REQUEST_NULL);
  MPI_CHECK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "open_modes");
  static const struct Mode modes[] = {
      {MPI_MODE_CREATE | MPI_MODE_WRONLY, 0, "create_wronly_new"},
      {MPI_MODE_CREATE | MPI_MODE_WRONLY, 1, "create_wronly_existing"},
      {MPI_MODE_WRONLY, 1, "wronly"},
      {MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, 0, "create_excl_wronly"},
      {MPI_MODE_APPEND | MPI_MODE_WRONLY, 1, "append_wronly"},
      {MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, 0,
       "create_wronly_delete_on_close"},
  };
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; ++m) {
    write_only_checkpoint(&modes[m], NULL, NULL);
  }
  /* The hints that select each method, on an existing write-only file. */
  static const char* const hints[][2] = {
      {"romio_ds_write", "enable"},
      {"romio_ds_write", "disable"},
      {"romio_cb_write", "disable"},
      {"romio_cb_write", "enable"},
      {"cb_nodes", "1"},
  };
  for (size_t h = 0; h < sizeof hints / sizeof hints[0]; ++h) {
    write_only_checkpoint(&modes[2], hints[h][0], hints[h][1]);
  }
  independent_writes();
  read_only_refuses_writes();
  return t_finish();
}
