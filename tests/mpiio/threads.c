/* Threads that do I/O at once (MPI_THREAD_MULTIPLE): THREADS threads per
 * rank, each with a communicator and a file of its own, each opening its
 * file (shared file pointers included), then ROUNDS times writing
 * collectively (write_at_all, or iwrite_at_all + MPI_Wait) and reading back
 * collectively through a strided view, while also writing its own regions
 * of one file that all threads of all ranks share, independently. Every
 * byte is checked. MPICH's own MPI-IO deadlocks on this program (its
 * collective calls are not safe from several threads at once), so it runs
 * with the layer alone.
 *
 * Usage: threads OUTPUT_DIRECTORY [THREADS [ROUNDS]]: one pass of THREADS
 * threads (ROUNDS 100); by default two, 4 threads x 100 rounds, then
 * 8 threads x 50.
 *
 * Outputs, for each pass of N threads:
 *   threads.N.T.dat  thread T's file: BLOCKS blocks of BLOCK bytes per rank
 *                    and region, interleaved between ranks
 *   shared.N.dat     one strip of STRIP bytes per rank, thread and round */
#include <pthread.h>

#include "mpiio_test.h"

enum { MOST_THREADS = 16, BLOCKS = 8, BLOCK = 512, PART = BLOCKS * BLOCK, REGIONS = 16 };
enum { STRIP = 256 };

static int threads = 4;
static int rounds = 100;
static MPI_Comm comms[MOST_THREADS];
static MPI_File shared;
static int wrong[MOST_THREADS];

static unsigned char value(int thread, int round, int j) {
  return (unsigned char)(t_rank * 5 + thread * 11 + round + j * 3);
}

static MPI_Offset strip_offset(int thread, int round) {
  return (((MPI_Offset)t_rank * threads + thread) * rounds + round) * STRIP;
}

static void* run(void* argument) {
  const int thread = (int)(long)argument;
  MPI_Comm comm = comms[thread];
  char name[64];
  snprintf(name, sizeof name, "threads.%d.%d.dat", threads, thread);
  char path[4096];
  t_path(path, sizeof path, name);
  MPI_File fh;
  MPI_CHECK(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_Datatype vector, view;
  MPI_Type_vector(BLOCKS, BLOCK, BLOCK * t_nranks, MPI_BYTE, &vector);
  MPI_Type_create_resized(vector, 0, (MPI_Aint)PART * t_nranks, &view);
  MPI_Type_commit(&view);
  MPI_Type_free(&vector);
  MPI_CHECK(
      MPI_File_set_view(fh, (MPI_Offset)t_rank * BLOCK, MPI_BYTE, view, "native", MPI_INFO_NULL));
  unsigned char out[PART], in[PART], strip[STRIP];
  for (int round = 0; round < rounds; ++round) {
    for (int j = 0; j < PART; ++j) out[j] = value(thread, round, j);
    const MPI_Offset at = (MPI_Offset)(round % REGIONS) * PART;
    if (round % 2 == 0) {
      MPI_CHECK(MPI_File_write_at_all(fh, at, out, PART, MPI_BYTE, MPI_STATUS_IGNORE));
    } else {
      MPI_Request request;
      MPI_CHECK(MPI_File_iwrite_at_all(fh, at, out, PART, MPI_BYTE, &request));
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    memset(in, 0, sizeof in);
    MPI_CHECK(MPI_File_read_at_all(fh, at, in, PART, MPI_BYTE, MPI_STATUS_IGNORE));
    if (memcmp(in, out, PART) != 0) ++wrong[thread];
    for (int j = 0; j < STRIP; ++j) strip[j] = value(thread, round, j + 1);
    MPI_CHECK(MPI_File_write_at(shared, strip_offset(thread, round), strip, STRIP, MPI_BYTE,
                                MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_File_close(&fh));
  MPI_Type_free(&view);
  return NULL;
}

/* One pass: `threads` threads of `rounds` rounds; checks every byte. */
static void pass(void) {
  for (int t = 0; t < threads; ++t) {
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    wrong[t] = 0;
  }
  char name[64];
  snprintf(name, sizeof name, "shared.%d.dat", threads);
  t_open(name, &shared);
  t_doing("threads at work");
  pthread_t workers[MOST_THREADS];
  for (int t = 0; t < threads; ++t)
    CHECK(pthread_create(&workers[t], NULL, run, (void*)(long)t) == 0);
  for (int t = 0; t < threads; ++t) CHECK(pthread_join(workers[t], NULL) == 0);

  t_doing("check: the shared file");
  t_make_visible(shared);
  int wrong_strips = 0;
  unsigned char strip[STRIP];
  for (int thread = 0; thread < threads; ++thread) {
    for (int round = 0; round < rounds; ++round) {
      MPI_CHECK(MPI_File_read_at(shared, strip_offset(thread, round), strip, STRIP, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
      for (int j = 0; j < STRIP; ++j) {
        if (strip[j] != value(thread, round, j + 1)) {
          ++wrong_strips;
          break;
        }
      }
    }
  }
  int wrong_rounds = 0;
  for (int t = 0; t < threads; ++t) wrong_rounds += wrong[t];
  t_report("%d threads x %d rounds: %d rounds read back wrong, %d shared strips wrong", threads,
           rounds, wrong_rounds, wrong_strips);
  CHECK_EQ(wrong_rounds, 0);
  CHECK_EQ(wrong_strips, 0);
  MPI_CHECK(MPI_File_close(&shared));
  for (int t = 0; t < threads; ++t) MPI_Comm_free(&comms[t]);
}

int main(int argc, char** argv) {
  t_init_thread(&argc, &argv, "threads");
  if (argc > 2) {
    threads = atoi(argv[2]);
    if (argc > 3) rounds = atoi(argv[3]);
    CHECK(threads >= 1 && threads <= MOST_THREADS && rounds >= 1);
    pass();
    return t_finish();
  }
  threads = 4;
  rounds = 100;
  pass();
  threads = 8;
  rounds = 50;
  pass();
  return t_finish();
}
