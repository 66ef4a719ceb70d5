// One data call of the MPI-IO interface (read or write; independent or
// collective; at an explicit offset, at the individual file pointer or at
// the shared one) carried out on a LayerFile's flowio::File.
//
// Atomic mode is flowio::File's (File::set_atomicity): the calls are made
// alike in it.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "flowio/future.h"

namespace flowio::mpiio {

struct LayerFile;

enum class Position {
  explicit_offset,     // MPI_File_*_at*
  individual_pointer,  // MPI_File_read, MPI_File_write_all, ...
  shared_pointer,      // MPI_File_*_shared, and the ordered calls when collective
};

struct DataCall {
  bool writing = false;
  bool collective = false;
  Position position = Position::explicit_offset;
  MPI_Offset offset = 0;  // in etypes, for explicit_offset
  const void* buffer = nullptr;
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_BYTE;
};

// Checks the call (UsageError when bad) and carries it out, returning the
// bytes moved when it is done.
std::size_t run_to_completion(LayerFile& file, const DataCall& call);

// Checks the call (UsageError when bad) and starts it.
Future<std::size_t> start(LayerFile& file, const DataCall& call);

}  // namespace flowio::mpiio
