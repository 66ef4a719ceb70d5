/* Bad input through the MPI-IO layer that MPICH 4.0.2's own MPI-IO cannot
 * be compared on (run with the layer alone, run_with_layer.sh): a null
 * buffer (MPICH fails the write with MPI_ERR_IO and "reads" successfully),
 * a count whose bytes overflow (MPICH aborts on an assertion), a freed
 * datatype (MPICH reads through the dead handle), nonsense hint values
 * (MPICH aborts or divides by zero), and collective calls with a bad
 * argument on one rank only. The program checks the error class on every
 * rank itself and prints one line per case.
 *
 * Usage: bad_input_layer OUTPUT_DIRECTORY [--only=CASE | --skip=CASE,...]
 * The cases named in tests/support/expected_failures.bzl wait for the
 * collective engine: the test runs them one by one (--only) and expects
 * them to fail; each waits for its requests with a deadline, so that a
 * hang fails the job at once, naming the call. */
#include "mpiio_test.h"

#include <time.h>

/* Collective: every rank's error class for `code` must be `expected`;
 * rank 0 prints them. */
static void expect_class(const char* label, int code, int expected) {
  const int error_class = code == MPI_SUCCESS ? MPI_SUCCESS : t_class_of(code);
  t_report("%-62s %s", label, t_class_name(error_class));
  if (error_class != expected) {
    char detail[256];
    snprintf(detail, sizeof detail, "%s: got %s, expected %s", label, t_class_name(error_class),
             t_class_name(expected));
    t_fail_at(__FILE__, __LINE__, "error class", detail);
  }
}

/* Waits for `request` up to `seconds`; past that the job fails naming
 * `what` (a collective partner that never comes must not hang the test). */
static int wait_with_deadline(MPI_Request* request, double seconds, const char* what) {
  const double start = MPI_Wtime();
  int done = 0;
  int code = MPI_SUCCESS;
  /* A failed request's error comes back from MPI_Test on the handler of
   * errors tied to no communicator (MPI_COMM_SELF's in MPICH 4.0.2, fatal
   * by default), not the file's: asked to be returned while waiting. */
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  while (!done) {
    code = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (MPI_Wtime() - start > seconds) {
      char detail[256];
      snprintf(detail, sizeof detail, "%s did not complete within %.0f s", what, seconds);
      t_fail_at(__FILE__, __LINE__, "deadline", detail);
    }
    const struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return code;
}

static MPI_File open_with(const char* name, const char* key, const char* value, int* code) {
  char path[4096];
  t_path(path, sizeof path, name);
  MPI_Info info = MPI_INFO_NULL;
  if (key != NULL) {
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
  }
  MPI_File fh = MPI_FILE_NULL;
  *code = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return fh;
}

static MPI_File open_plain(const char* name) {
  int code = MPI_SUCCESS;
  MPI_File fh = open_with(name, NULL, NULL, &code);
  MPI_CHECK(code);
  return fh;
}

/* This rank's 4 ints at its own place, written and read back. */
static void check_usable(MPI_File fh) {
  int mine[4] = {t_rank, 1, 2, 3}, back[4] = {-1, -1, -1, -1};
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at(fh, 16 * t_rank, mine, 4, MPI_INT, &status));
  MPI_CHECK(MPI_File_read_at(fh, 16 * t_rank, back, 4, MPI_INT, &status));
  CHECK(memcmp(mine, back, sizeof mine) == 0);
}

static void independent_arguments(void) {
  t_doing("independent arguments");
  MPI_File fh = open_plain("bad_layer_independent.dat");
  MPI_Status status;
  int data[4] = {0};
  expect_class("write_at: null buffer, count 4 MPI_INT",
               MPI_File_write_at(fh, 0, NULL, 4, MPI_INT, &status), MPI_ERR_BUFFER);
  expect_class("read_at: null buffer, count 4 MPI_INT",
               MPI_File_read_at(fh, 0, NULL, 4, MPI_INT, &status), MPI_ERR_BUFFER);
  expect_class("write_at_c: count 2^62 MPI_INT (bytes overflow)",
               MPI_File_write_at_c(fh, 0, data, (MPI_Count)1 << 62, MPI_INT, &status),
               MPI_ERR_COUNT);
  MPI_Datatype freed;
  MPI_Type_contiguous(2, MPI_INT, &freed);
  MPI_Type_commit(&freed);
  MPI_Datatype stale = freed;
  MPI_Type_free(&freed);
  expect_class("read_at: freed datatype", MPI_File_read_at(fh, 0, data, 1, stale, &status),
               MPI_ERR_TYPE);
  check_usable(fh);
  MPI_CHECK(MPI_File_close(&fh));
}

static void nonsense_hints(void) {
  t_doing("nonsense hints");
  static const char* const hints[][2] = {
      {"cb_buffer_size", "-5"},    {"cb_buffer_size", "abc"},
      {"cb_buffer_size", "0"},     {"cb_buffer_size", "99999999999999999999"},
      {"cb_nodes", "-1"},          {"striping_unit", "-1"},
      {"romio_cb_write", "maybe"}, {"flowio_buffers_in_flight", "99999999999"},
  };
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; ++i) {
    char label[128];
    snprintf(label, sizeof label, "open: %s=%s", hints[i][0], hints[i][1]);
    int code = MPI_SUCCESS;
    MPI_File fh = open_with("bad_layer_hints.dat", hints[i][0], hints[i][1], &code);
    CHECK(fh == MPI_FILE_NULL);
    expect_class(label, code, MPI_ERR_INFO_VALUE);
  }
  MPI_File fh = open_plain("bad_layer_hints.dat");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_nodes", "zero");
  expect_class("set_info: cb_nodes=zero", MPI_File_set_info(fh, info), MPI_ERR_INFO_VALUE);
  expect_class("set_view with info cb_nodes=zero",
               MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info), MPI_ERR_INFO_VALUE);
  MPI_Info_free(&info);
  check_usable(fh);
  MPI_CHECK(MPI_File_close(&fh));
}

/* Collective calls that move no data, with a bad argument on the last rank
 * only: every rank gets the same class. */
static void one_rank_bad(void) {
  t_doing("collective calls bad on one rank");
  const int bad = t_rank == t_nranks - 1;
  MPI_File fh = open_plain("bad_layer_one_rank.dat");
  check_usable(fh);
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  expect_class(
      "set_view: uncommitted filetype on the last rank",
      MPI_File_set_view(fh, 0, MPI_INT, bad ? uncommitted : MPI_INT, "native", MPI_INFO_NULL),
      MPI_ERR_TYPE);
  MPI_Type_free(&uncommitted);
  expect_class("set_size: -1 on the last rank", MPI_File_set_size(fh, bad ? -1 : 64), MPI_ERR_ARG);
  expect_class("preallocate: -1 on the last rank", MPI_File_preallocate(fh, bad ? -1 : 64),
               MPI_ERR_ARG);
  if (t_nranks > 1) {
    /* ROMIO's class for sizes that differ (its message says "not same"). */
    expect_class("set_size: another size on the last rank", MPI_File_set_size(fh, bad ? 32 : 64),
                 MPI_ERR_ARG);
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", bad ? "-1" : "65536");
  expect_class("set_info: cb_buffer_size=-1 on the last rank", MPI_File_set_info(fh, info),
               MPI_ERR_INFO_VALUE);
  MPI_Info_free(&info);
  check_usable(fh);
  MPI_CHECK(MPI_File_close(&fh));

  char path[4096];
  t_path(path, sizeof path, "bad_layer_open.dat");
  MPI_File opened = MPI_FILE_NULL;
  expect_class("open: no file name on the last rank",
               MPI_File_open(MPI_COMM_WORLD, bad ? NULL : path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &opened),
               MPI_ERR_ARG);
  expect_class(
      "open: RDONLY|WRONLY on the last rank",
      MPI_File_open(MPI_COMM_WORLD, path,
                    bad ? MPI_MODE_RDONLY | MPI_MODE_WRONLY : MPI_MODE_CREATE | MPI_MODE_RDWR,
                    MPI_INFO_NULL, &opened),
      MPI_ERR_AMODE);
  CHECK(opened == MPI_FILE_NULL);
}

/* A collective data call whose last rank passes `bad_count` (or, with
 * `read_on_bad`, reads while the others write): every rank must fail with
 * `expected`, in time. */
static void collective_bad_on_one(const char* label, int bad_count, MPI_Datatype bad_type,
                                  int read_on_bad, int expected) {
  t_doing(label);
  const int bad = t_rank == t_nranks - 1;
  MPI_File fh = open_plain("bad_layer_collective.dat");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_Info_set(info, "romio_cb_read", "enable");
  MPI_CHECK(MPI_File_set_info(fh, info));
  MPI_Info_free(&info);
  int data[256];
  for (int i = 0; i < 256; ++i) data[i] = t_rank;
  MPI_Request request = MPI_REQUEST_NULL;
  const MPI_Offset at = (MPI_Offset)t_rank * (MPI_Offset)sizeof data;
  int code;
  if (bad && read_on_bad) {
    code = MPI_File_iread_at_all(fh, at, data, 256, MPI_INT, &request);
  } else {
    code = MPI_File_iwrite_at_all(fh, at, data, bad ? bad_count : 256, bad ? bad_type : MPI_INT,
                                  &request);
  }
  if (code == MPI_SUCCESS) code = wait_with_deadline(&request, 10.0, label);
  expect_class(label, code, expected);
  MPI_Status status;
  MPI_CHECK(MPI_File_write_at_all(fh, at, data, 256, MPI_INT, &status));
  MPI_CHECK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  t_init(&argc, &argv, "bad_input_layer");
  t_select_cases(argc, argv);
  if (t_should_run("IndependentArguments")) independent_arguments();
  if (t_should_run("NonsenseHints")) nonsense_hints();
  if (t_should_run("OneRankBadInNonDataCollectives")) one_rank_bad();
  if (t_should_run("NegativeCountOnOneRank")) {
    collective_bad_on_one("iwrite_at_all: count -1 on the last rank", -1, MPI_INT, 0,
                          MPI_ERR_COUNT);
  }
  if (t_should_run("UncommittedTypeOnOneRank")) {
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(256, MPI_INT, &uncommitted);
    collective_bad_on_one("iwrite_at_all: uncommitted datatype on the last rank", 1, uncommitted, 0,
                          MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
  }
  if (t_nranks > 1 && t_should_run("ReadWhileOthersWrite")) {
    collective_bad_on_one("iread_at_all on the last rank, iwrite_at_all on the others", 256,
                          MPI_INT, 1, MPI_ERR_NOT_SAME);
  }
  return t_finish();
}
