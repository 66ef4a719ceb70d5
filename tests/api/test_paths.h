// Where multi-rank tests put their files: $TEST_TMPDIR (Bazel) or $TMPDIR,
// with the same name on every rank.
#pragma once

#include <mpi.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace flowio::testing {

// A path under the test's scratch directory, agreed by all ranks of `comm`.
inline std::string scratch_path(MPI_Comm comm, const std::string& name) {
  const char* directory = std::getenv("TEST_TMPDIR");
  if (directory == nullptr) directory = std::getenv("TMPDIR");
  if (directory == nullptr) directory = "/tmp";
  int size = 0;
  MPI_Comm_size(comm, &size);
  return std::string(directory) + "/" + name + "." + std::to_string(size) + "ranks";
}

// Collective over MPI_COMM_WORLD: scratch_path(MPI_COMM_WORLD, name), with
// any file left there by an earlier run removed by rank 0 before any rank
// returns.
inline std::string fresh_path(const std::string& name) {
  const std::string path = scratch_path(MPI_COMM_WORLD, name);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) ::unlink(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

}  // namespace flowio::testing
