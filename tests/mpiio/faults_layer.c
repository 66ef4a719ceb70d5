/* Storage faults through the MPI-IO layer, run with the layer alone and a
 * build of it that injects faults (libflowio_mpiio_faults.so, which links
 * //io:fault_injection; FLOWIO_FAULT is read at each MPI_File_open, so the
 * program sets it before each open): a write or read fault on the last
 * rank fails a collective call on every rank with the same MPI error class
 * (blocking and nonblocking: cases InjectedFaults, NonblockingFault) and
 * an independent one on that rank only; the
 * file goes on working. Then real ones, whose messages (MPI_Error_string)
 * must name the file on every rank: an independent write to /dev/full,
 * which fails every write with ENOSPC (case FullDevice), and a collective
 * write into a full 1 MiB tmpfs (skipped, with the marker tools/test.sh
 * counts, where this process may not mount; case FullFileSystem). Each
 * case prints one line with every rank's class. Usage: faults_layer
 * OUTPUT_DIRECTORY [--only=CASE | --skip=CASE,...]. */
#include "mpiio_test.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>

enum { BLOCK = 4096, BLOCKS = 16 };

/* Opens `name` for two-phase I/O with FLOWIO_FAULT set to `fault` (NULL:
 * none) for this open. */
static MPI_File open_faulty(const char* name, const char* fault) {
  char path[4096];
  t_path(path, sizeof path, name);
  if (fault != NULL) {
    setenv("FLOWIO_FAULT", fault, 1);
  } else {
    unsetenv("FLOWIO_FAULT");
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_Info_set(info, "romio_cb_read", "enable");
  MPI_Info_set(info, "flowio_ds_mapping", "disable");
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  unsetenv("FLOWIO_FAULT");
  return fh;
}

/* Each rank's BLOCKS blocks interleave with the others'. */
static void set_interleaved_view(MPI_File fh) {
  MPI_Datatype block, tiled;
  MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * t_nranks, &tiled);
  MPI_Type_commit(&tiled);
  MPI_CHECK(
      MPI_File_set_view(fh, (MPI_Offset)t_rank * BLOCK, MPI_BYTE, tiled, "native", MPI_INFO_NULL));
  MPI_Type_free(&block);
  MPI_Type_free(&tiled);
}

/* Collective: prints `label` with every rank's class and checks that the
 * ranks in `failing` (a bit per rank; -1: all) got `expected` and the
 * others MPI_SUCCESS. */
static void expect(const char* label, int code, unsigned failing, int expected) {
  const int error_class = code == MPI_SUCCESS ? MPI_SUCCESS : t_class_of(code);
  t_report("%-58s %s", label, t_class_name(error_class));
  const int should_fail = (failing >> t_rank) & 1u;
  const int wanted = should_fail ? expected : MPI_SUCCESS;
  if (error_class != wanted) {
    char detail[256];
    snprintf(detail, sizeof detail, "%s: got %s, expected %s", label, t_class_name(error_class),
             t_class_name(wanted));
    t_fail_at(__FILE__, __LINE__, "error class", detail);
  }
}

/* Fails the test unless the message of the error `code` contains `name`. */
static void expect_message_naming(int code, const char* name) {
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_CHECK(MPI_Error_string(code, message, &length));
  if (strstr(message, name) == NULL) {
    char detail[MPI_MAX_ERROR_STRING + 64];
    snprintf(detail, sizeof detail, "does not name %s: %s", name, message);
    t_fail_at(__FILE__, __LINE__, "error message", detail);
  }
}

static void fill(char* data, int salt) {
  for (int i = 0; i < BLOCK * BLOCKS; ++i) data[i] = (char)(1 + (i * 7 + t_rank * 13 + salt) % 251);
}

static void injected_faults(void) {
  static char data[BLOCK * BLOCKS], back[BLOCK * BLOCKS];
  const unsigned all = ~0u, last = 1u << (t_nranks - 1);
  char fault[128];
  MPI_Status status;

  t_doing("collective write fault");
  snprintf(fault, sizeof fault, "on=write,rank=%d,fault=enospc", t_nranks - 1);
  MPI_File fh = open_faulty("faults_write.dat", fault);
  set_interleaved_view(fh);
  fill(data, 1);
  expect("write_at_all, ENOSPC injected on the last rank",
         MPI_File_write_at_all(fh, 0, data, BLOCK * BLOCKS, MPI_BYTE, &status), all,
         MPI_ERR_NO_SPACE);
  expect("write_at_all again (the fault was once)",
         MPI_File_write_at_all(fh, 0, data, BLOCK * BLOCKS, MPI_BYTE, &status), 0, MPI_SUCCESS);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, back, BLOCK * BLOCKS, MPI_BYTE, &status));
  CHECK(memcmp(back, data, sizeof data) == 0);
  MPI_CHECK(MPI_File_close(&fh));

  t_doing("collective read fault");
  fh = open_faulty("faults_write.dat", NULL);
  MPI_CHECK(MPI_File_close(&fh));
  snprintf(fault, sizeof fault, "on=read,rank=%d,fault=eio", t_nranks - 1);
  fh = open_faulty("faults_write.dat", fault);
  set_interleaved_view(fh);
  expect("read_at_all, EIO injected on the last rank",
         MPI_File_read_at_all(fh, 0, back, BLOCK * BLOCKS, MPI_BYTE, &status), all, MPI_ERR_IO);
  memset(back, 0, sizeof back);
  MPI_CHECK(MPI_File_read_at_all(fh, 0, back, BLOCK * BLOCKS, MPI_BYTE, &status));
  CHECK(memcmp(back, data, sizeof data) == 0);
  MPI_CHECK(MPI_File_close(&fh));

  t_doing("independent write fault");
  snprintf(fault, sizeof fault, "on=write,rank=%d,fault=enospc", t_nranks - 1);
  fh = open_faulty("faults_independent.dat", fault);
  expect("write_at, ENOSPC injected on the last rank",
         MPI_File_write_at(fh, (MPI_Offset)t_rank * sizeof data, data, BLOCK * BLOCKS, MPI_BYTE,
                           &status),
         last, MPI_ERR_NO_SPACE);
  MPI_CHECK(MPI_File_close(&fh));
}

/* A fault in a nonblocking collective write reaches MPI_Wait on every
 * rank. */
static void nonblocking_fault(void) {
  static char data[BLOCK * BLOCKS];
  char fault[128];
  MPI_Status status;
  t_doing("nonblocking collective write fault");
  fill(data, 2);
  snprintf(fault, sizeof fault, "on=write,rank=%d,fault=eio", t_nranks - 1);
  MPI_File fh = open_faulty("faults_iwrite.dat", fault);
  set_interleaved_view(fh);
  MPI_Request request;
  MPI_CHECK(MPI_File_iwrite_at_all(fh, 0, data, BLOCK * BLOCKS, MPI_BYTE, &request));
  /* The error comes back from MPI_Wait, which raises it on the handler of
   * errors tied to no communicator (MPI_COMM_SELF's in MPICH 4.0.2, fatal
   * by default) rather than the file's: the program asks for errors to be
   * returned there. */
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  expect("iwrite_at_all + MPI_Wait, EIO injected on the last rank", MPI_Wait(&request, &status),
         ~0u, MPI_ERR_IO);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_CHECK(MPI_File_close(&fh));
}

static void full_file_system(void) {
  t_doing("a full tmpfs");
  char directory[4096];
  t_path(directory, sizeof directory, "tmpfs");
  int error = 0;
  if (t_rank == 0) {
    mkdir(directory, 0755);
    if (mount("tmpfs", directory, "tmpfs", 0, "size=1m") != 0) error = errno;
  }
  MPI_Bcast(&error, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (error != 0) {
    if (t_rank == 0) {
      printf(
          "flowio-test: SKIPPED \"faults_layer: a full tmpfs\": mounting a tmpfs is not "
          "permitted here (%s)\n",
          strerror(error));
    }
    return;
  }
  char path[4096 + 16];
  snprintf(path, sizeof path, "%s/full.dat", directory);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  const int bytes = (1 << 20) + 4096; /* more than the tmpfs holds, on any number of ranks */
  char* data = malloc((size_t)bytes);
  CHECK(data != NULL);
  memset(data, 'f', (size_t)bytes);
  MPI_Status status;
  const double start = MPI_Wtime();
  const int code =
      MPI_File_write_at_all(fh, (MPI_Offset)t_rank * bytes, data, bytes, MPI_BYTE, &status);
  const double seconds = MPI_Wtime() - start;
  expect("write_at_all of 1 MiB + 4 KiB per rank into a 1 MiB tmpfs", code, ~0u, MPI_ERR_NO_SPACE);
  expect_message_naming(code, "full.dat");
  double slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (t_rank == 0)
    fprintf(stderr, "faults_layer: full tmpfs: every rank failed within %.3f s\n", slowest);
  MPI_CHECK(MPI_File_close(&fh));
  free(data);
  MPI_Barrier(MPI_COMM_WORLD);
  if (t_rank == 0) umount2(directory, MNT_DETACH);
}

static void full_device(void) {
  t_doing("a write to /dev/full");
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  char data[4096];
  memset(data, 'd', sizeof data);
  MPI_Status status;
  const int code = MPI_File_write_at(fh, 0, data, (int)sizeof data, MPI_BYTE, &status);
  expect("write_at of 4 KiB to /dev/full", code, ~0u, MPI_ERR_NO_SPACE);
  expect_message_naming(code, "/dev/full");
  MPI_CHECK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "faults_layer");
  t_select_cases(argc, argv);
  if (t_should_run("InjectedFaults")) injected_faults();
  if (t_should_run("NonblockingFault")) nonblocking_fault();
  if (t_should_run("FullDevice")) full_device();
  if (t_should_run("FullFileSystem")) full_file_system();
  return t_finish();
}
