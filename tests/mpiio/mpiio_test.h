/* Helpers shared by the MPI-IO compatibility tests: checks that abort the
 * job, paths under the output directory, and printing from rank 0 only.
 *
 * The tests are plain C11 over the standard MPI API, so that the same binary
 * runs against MPICH's own MPI-IO and, with LD_PRELOAD, against flowio's
 * MPI-IO layer (run_with_and_without_layer.sh compares the two runs). Their
 * stdout must therefore be deterministic: only rank 0 prints, and what the
 * other ranks found reaches it through t_report(), a collective gather.
 * Everything is header-only (static functions), one copy per program. */
#ifndef FLOWIO_TESTS_MPIIO_MPIIO_TEST_H_
#define FLOWIO_TESTS_MPIIO_MPIIO_TEST_H_

/* alarm, signal and write for the watchdog (before any system header). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set by t_init(); read-only afterwards. */
static int t_rank = -1;
static int t_nranks = 0;
static const char* t_dir = NULL;
static const char* t_program = "test";

/* The name of an MPI error class, for printing. Classes, not codes, are
 * what the compared runs print: codes and message texts may legitimately
 * differ between MPICH's MPI-IO and the layer. */
static inline const char* t_class_name(int error_class) {
  switch (error_class) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS";
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM";
    case MPI_ERR_GROUP:
      return "MPI_ERR_GROUP";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_UNKNOWN:
      return "MPI_ERR_UNKNOWN";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING";
    case MPI_ERR_REQUEST:
      return "MPI_ERR_REQUEST";
    case MPI_ERR_ACCESS:
      return "MPI_ERR_ACCESS";
    case MPI_ERR_AMODE:
      return "MPI_ERR_AMODE";
    case MPI_ERR_BAD_FILE:
      return "MPI_ERR_BAD_FILE";
    case MPI_ERR_CONVERSION:
      return "MPI_ERR_CONVERSION";
    case MPI_ERR_DUP_DATAREP:
      return "MPI_ERR_DUP_DATAREP";
    case MPI_ERR_FILE_EXISTS:
      return "MPI_ERR_FILE_EXISTS";
    case MPI_ERR_FILE_IN_USE:
      return "MPI_ERR_FILE_IN_USE";
    case MPI_ERR_FILE:
      return "MPI_ERR_FILE";
    case MPI_ERR_INFO:
      return "MPI_ERR_INFO";
    case MPI_ERR_INFO_KEY:
      return "MPI_ERR_INFO_KEY";
    case MPI_ERR_INFO_VALUE:
      return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_INFO_NOKEY:
      return "MPI_ERR_INFO_NOKEY";
    case MPI_ERR_IO:
      return "MPI_ERR_IO";
    case MPI_ERR_NO_SPACE:
      return "MPI_ERR_NO_SPACE";
    case MPI_ERR_NO_SUCH_FILE:
      return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_NOT_SAME:
      return "MPI_ERR_NOT_SAME";
    case MPI_ERR_QUOTA:
      return "MPI_ERR_QUOTA";
    case MPI_ERR_READ_ONLY:
      return "MPI_ERR_READ_ONLY";
    case MPI_ERR_UNSUPPORTED_DATAREP:
      return "MPI_ERR_UNSUPPORTED_DATAREP";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_VALUE_TOO_LARGE:
      return "MPI_ERR_VALUE_TOO_LARGE";
    default:
      return "MPI_ERR_(unlisted)";
  }
}

/* The class of an error code, or a note that MPI_Error_class rejected it. */
static inline int t_class_of(int code) {
  int error_class = -1;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return -1;
  return error_class;
}

static inline void t_fail_at(const char* file, int line, const char* what, const char* detail) {
  fprintf(stderr, "%s: rank %d: check failed at %s:%d: %s%s%s\n", t_program, t_rank, file, line,
          what, detail[0] ? ": " : "", detail);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static inline void t_fail_mpi_at(const char* file, int line, const char* what, int code) {
  char text[MPI_MAX_ERROR_STRING + 64];
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  message[0] = '\0';
  MPI_Error_string(code, message, &length);
  int error_class = t_class_of(code);
  snprintf(text, sizeof text, "returned %s (%d): %s", t_class_name(error_class), error_class,
           message);
  t_fail_at(file, line, what, text);
}

static inline void t_fail_int_at(const char* file, int line, const char* what, long long actual,
                                 long long expected) {
  char text[128];
  snprintf(text, sizeof text, "got %lld, expected %lld", actual, expected);
  t_fail_at(file, line, what, text);
}

/* CHECK(condition): aborts the job when the condition is false. */
#define CHECK(condition)                                             \
  do {                                                               \
    if (!(condition)) t_fail_at(__FILE__, __LINE__, #condition, ""); \
  } while (0)

/* CHECK_EQ(actual, expected): integer comparison that prints both values. */
#define CHECK_EQ(actual, expected)                                                         \
  do {                                                                                     \
    long long t_actual_ = (long long)(actual);                                             \
    long long t_expected_ = (long long)(expected);                                         \
    if (t_actual_ != t_expected_)                                                          \
      t_fail_int_at(__FILE__, __LINE__, #actual " == " #expected, t_actual_, t_expected_); \
  } while (0)

/* MPI_CHECK(call): the call must return MPI_SUCCESS. */
#define MPI_CHECK(call)                                                            \
  do {                                                                             \
    int t_code_ = (call);                                                          \
    if (t_code_ != MPI_SUCCESS) t_fail_mpi_at(__FILE__, __LINE__, #call, t_code_); \
  } while (0)

/* The step under way, for the watchdog's message: set by t_doing(), and by
 * t_report() to the line it reported last. */
static char t_step[256] = "start";

static inline void t_doing(const char* step) {
  strncpy(t_step, step, sizeof t_step - 1);
  t_step[sizeof t_step - 1] = '\0';
}

/* Writes a string to stderr from a signal handler (only write(2) is safe
 * there). */
static inline void t_signal_safe_print(const char* text) {
  ssize_t ignored = write(2, text, strlen(text));
  (void)ignored;
}

/* SIGALRM at the test deadline: the job is hung. Names the program, the
 * rank and the step, then ends the process (mpiexec then ends the job). */
static void t_watchdog(int signal_number) {
  (void)signal_number;
  char digits[16];
  int length = 0;
  unsigned r = t_rank < 0 ? 0u : (unsigned)t_rank;
  do {
    digits[length++] = (char)('0' + r % 10);
    r /= 10;
  } while (r > 0);
  char rank_text[16];
  for (int i = 0; i < length; ++i) rank_text[i] = digits[length - 1 - i];
  rank_text[length] = '\0';
  t_signal_safe_print(t_program);
  t_signal_safe_print(": rank ");
  t_signal_safe_print(rank_text);
  t_signal_safe_print(
      ": FAILED: no result within the test deadline (FLOWIO_TEST_DEADLINE); step under way: ");
  t_signal_safe_print(t_step);
  t_signal_safe_print("\n");
  _exit(124);
}

/* What t_init and t_init_thread do once MPI is initialized: reads the
 * output directory from argv[1]. Every file a test writes goes under that
 * directory (t_path). With FLOWIO_TEST_DEADLINE set (the test runner sets
 * it below Bazel's timeout), a watchdog ends a hung process with the step
 * under way. */
static inline void t_start(int* argc, char*** argv, const char* program) {
  t_program = program;
  MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t_nranks);
  const char* deadline = getenv("FLOWIO_TEST_DEADLINE");
  if (deadline != NULL && atoi(deadline) > 0) {
    signal(SIGALRM, t_watchdog);
    alarm((unsigned)atoi(deadline));
  }
  if (*argc < 2) {
    if (t_rank == 0) fprintf(stderr, "usage: %s OUTPUT_DIRECTORY\n", (*argv)[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  t_dir = (*argv)[1];
}

/* Initializes MPI; see t_start. */
static inline void t_init(int* argc, char*** argv, const char* program) {
  MPI_Init(argc, argv);
  t_start(argc, argv, program);
}

/* As t_init, for programs whose threads call MPI at once. */
static inline void t_init_thread(int* argc, char*** argv, const char* program) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "%s: MPI_THREAD_MULTIPLE not provided\n", program);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  t_start(argc, argv, program);
}

/* Programs made of named cases take, after the output directory,
 * --only=CASE (run that case alone) or --skip=CASE,CASE (run all others);
 * set by t_select_cases(), read by t_should_run(). */
static const char* t_only_case = NULL;
static const char* t_skipped_cases = "";

static inline void t_select_cases(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (strncmp(argv[i], "--only=", 7) == 0) t_only_case = argv[i] + 7;
    if (strncmp(argv[i], "--skip=", 7) == 0) t_skipped_cases = argv[i] + 7;
  }
}

static inline int t_should_run(const char* name) {
  if (t_only_case != NULL) return strcmp(t_only_case, name) == 0;
  const size_t length = strlen(name);
  for (const char* at = strstr(t_skipped_cases, name); at != NULL; at = strstr(at + 1, name)) {
    const int starts = at == t_skipped_cases || at[-1] == ',';
    const int ends = at[length] == '\0' || at[length] == ',';
    if (starts && ends) return 0;
  }
  return 1;
}

/* Writes DIR/name into path (a buffer of `size` bytes). */
static inline void t_path(char* path, size_t size, const char* name) {
  int length = snprintf(path, size, "%s/%s", t_dir, name);
  CHECK(length > 0 && (size_t)length < size);
}

/* Rank 0 prints one line; other ranks print nothing. Use it for values that
 * are known to be the same on every rank (or only rank 0 has). */
static inline void t_say(const char* format, ...) {
  if (t_rank != 0) return;
  va_list arguments;
  va_start(arguments, format);
  vprintf(format, arguments);
  va_end(arguments);
  putchar('\n');
  fflush(stdout);
}

/* Collective: opens DIR/name with `amode`, its path written into `path`
 * (a buffer of `size` bytes) for the calls that name the file again. */
static inline void t_open_path(const char* name, int amode, char* path, size_t size, MPI_File* fh) {
  t_path(path, size, name);
  MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, fh));
}

/* Collective: opens DIR/name for reading and writing, creating it. */
static inline void t_open(const char* name, MPI_File* fh) {
  char path[4096];
  t_open_path(name, MPI_MODE_CREATE | MPI_MODE_RDWR, path, sizeof path, fh);
}

/* Collective: sync, barrier, sync. Afterwards every rank sees what any
 * rank wrote before (MPI's consistency rule outside atomic mode). */
static inline void t_make_visible(MPI_File fh) {
  MPI_CHECK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_CHECK(MPI_File_sync(fh));
}

enum { T_LINE = 1024 };

/* Collective over MPI_COMM_WORLD: every rank formats one line and rank 0
 * prints them, as "all: line" when every rank's line is the same, else as
 * "rank R: line" for each rank in order. */
static inline void t_report(const char* format, ...) {
  char line[T_LINE];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
  /* The step's text is cut to fit: a prefix of the line names it. */
  static const char after[] = "after reporting: ";
  size_t kept = strlen(line);
  if (kept > sizeof t_step - sizeof after) kept = sizeof t_step - sizeof after;
  memcpy(t_step, after, sizeof after - 1);
  memcpy(t_step + sizeof after - 1, line, kept);
  t_step[sizeof after - 1 + kept] = '\0';
  char* lines = NULL;
  if (t_rank == 0) {
    lines = malloc((size_t)t_nranks * T_LINE);
    CHECK(lines != NULL);
  }
  MPI_Gather(line, T_LINE, MPI_CHAR, lines, T_LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (t_rank == 0) {
    int same = 1;
    for (int r = 1; r < t_nranks; ++r)
      same = same && strcmp(lines, lines + (size_t)r * T_LINE) == 0;
    if (same) {
      printf("all: %s\n", lines);
    } else {
      for (int r = 0; r < t_nranks; ++r) printf("rank %d: %s\n", r, lines + (size_t)r * T_LINE);
    }
    fflush(stdout);
    free(lines);
  }
}

/* The number of elements of `type` in a status, or MPI_UNDEFINED. */
static inline int t_count(const MPI_Status* status, MPI_Datatype type) {
  int count = -2;
  MPI_CHECK(MPI_Get_count(status, type, &count));
  return count;
}

/* Fills a status with a garbage pattern, so that a call that forgets to set
 * a field shows it. */
static inline void t_garble(MPI_Status* status) { memset(status, 0xA5, sizeof *status); }

/* Collective: ends the test; rank 0 prints "<program>: done". */
static inline int t_finish(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  t_say("%s: done", t_program);
  MPI_Finalize();
  return 0;
}

#endif /* FLOWIO_TESTS_MPIIO_MPIIO_TEST_H_ */
