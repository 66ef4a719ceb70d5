// What multi-rank tests put in and read back from their scratch files: the
// whole file's bytes, and a file of pattern bytes whose value at each
// offset the test can recompute.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace flowio::testing {

// The bytes of the file at `path` (none when it cannot be read), as char
// or unsigned char.
template <typename Byte = char>
std::vector<Byte> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  return std::vector<Byte>(bytes.begin(), bytes.end());
}

// The pattern byte at `file_offset`: period 251, so neighbouring blocks differ.
inline char pattern(std::int64_t file_offset) {
  return static_cast<char>((file_offset * 131 + 7) % 251);
}

// Collective over MPI_COMM_WORLD: rank 0 fills `path` with `bytes`
// pattern bytes; every rank returns once it is there.
inline void write_pattern_file(const std::string& path, std::int64_t bytes) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::vector<char> contents(static_cast<std::size_t>(bytes));
    for (std::int64_t i = 0; i < bytes; ++i) contents[static_cast<std::size_t>(i)] = pattern(i);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace flowio::testing
