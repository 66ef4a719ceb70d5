// doctest main for multi-rank tests run under mpiexec. Every rank runs every
// test case; the process exits non-zero on every rank if any rank failed, so
// a failure on one rank fails the whole job. Only rank 0 prints the summary.
// A watchdog (test_progress.h) ends a hung job with the test case and
// operation that hung.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>

#include "tests/support/test_progress.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  flowio::testing::start_watchdog();
  doctest::Context context(argc, argv);
  if (rank != 0) context.setOption("no-intro", true);
  const int failed = context.run();
  int any_failed = 0;
  const int local_failed = failed != 0 ? 1 : 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed) std::fprintf(stderr, "flowio: a rank failed\n");
  if (rank == 0) flowio::testing::report_skips();
  MPI_Finalize();
  return any_failed;
}
