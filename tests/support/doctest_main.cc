// doctest main for single-process unit tests. MPI is initialized (as a
// singleton, MPI_THREAD_MULTIPLE) because the datatype code asks MPI about
// the types it flattens.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>

#include "tests/support/test_progress.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  flowio::testing::start_watchdog();
  doctest::Context context(argc, argv);
  const int failed = context.run();
  flowio::testing::report_skips();
  MPI_Finalize();
  return failed;
}
