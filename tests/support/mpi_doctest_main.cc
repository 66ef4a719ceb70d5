// doctest main for multi-rank tests run under mpiexec. Every rank runs every
// test case; the process exits non-zero on every rank if any rank failed, so
// a failure on one rank fails the whole job. Only rank 0 prints the summary.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  doctest::Context context(argc, argv);
  if (rank != 0) context.setOption("no-intro", true);
  const int failed = context.run();
  int any_failed = 0;
  const int local_failed = failed != 0 ? 1 : 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed) std::fprintf(stderr, "flowio: a rank failed\n");
  MPI_Finalize();
  return any_failed;
}
