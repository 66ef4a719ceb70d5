// The bytes of a file as rank 0 of MPI_COMM_WORLD finds them, for tests
// that compare a whole file once every rank closed it.
#pragma once

#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace flowio::testing {

// The file's bytes on rank 0 of MPI_COMM_WORLD; empty on the other ranks.
inline std::vector<char> file_image_on_rank0(const std::string& path) {
  std::vector<char> image;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return image;
  FILE* file = std::fopen(path.c_str(), "rb");
  REQUIRE(file != nullptr);
  char buffer[65536];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    image.insert(image.end(), buffer, buffer + got);
  }
  std::fclose(file);
  return image;
}

}  // namespace flowio::testing
