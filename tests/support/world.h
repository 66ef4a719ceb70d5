// The calling process's rank in MPI_COMM_WORLD, the number of processes
// there, and whether something holds on all of them, for tests and
// benchmarks run under mpiexec (MPI initialized).
#pragma once

#include <mpi.h>

namespace flowio::testing {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Collective over MPI_COMM_WORLD: whether `mine` is true on every rank.
inline bool all_ranks(bool mine) {
  int local = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace flowio::testing
