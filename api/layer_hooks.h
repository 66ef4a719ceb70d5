// LayerHooks: what the MPI-IO layer (api/mpiio) needs of a flowio::File
// beyond the public API. Not part of the API: File names LayerHooks as a
// friend, this header is not installed, and only the layer's Bazel target
// (and tests) may depend on //api:layer_hooks.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "flowio/error.h"
#include "flowio/file.h"
#include "flowio/future.h"

namespace flowio {

struct LayerHooks {
  // Where a data call of the MPI-IO interface reads or writes.
  enum class Position {
    explicit_offset,     // MPI_File_*_at*
    individual_pointer,  // MPI_File_read, MPI_File_write_all, ...
    shared_pointer,      // MPI_File_*_shared, and the ordered calls when collective
  };

  // One data call of the MPI-IO interface (read or write; independent or
  // collective; at an explicit offset, the individual file pointer or the
  // shared one).
  struct DataCall {
    bool writing = false;
    bool collective = false;
    Position position = Position::explicit_offset;
    MPI_Offset offset = 0;  // in etypes, for explicit_offset
    const void* buffer = nullptr;
    MPI_Count count = 0;
    MPI_Datatype datatype = MPI_BYTE;
  };

  // The File call that `call` names, with File's own checks (UsageError)
  // and results: start() is its nonblocking form, run() its blocking one
  // (which may do the work on this thread). One dispatch for the layer's
  // 40-odd data calls, where the public API has a member function each.
  static Future<std::size_t> start(File& file, const DataCall& call);
  static std::size_t run(File& file, const DataCall& call);

  // For a layer that finds a collective data call's arguments bad before
  // handing it on: takes this process's part in the call without data, so
  // that the call fails with `code` on every process instead of leaving
  // the others waiting in it. Returns at once; the caller reports its own
  // error.
  static void refuse_collective(File& file, bool writing, ErrorCode code);

  // Over every file of the process so far (hint flowio_write_behind): the
  // blocking collective writes that returned before they ended (once
  // their data was copied, or, durable, once the engine no longer needed
  // the caller's memory), and how many of them first waited for older
  // ones to make room.
  struct WriteBehindCounts {
    long writes_behind = 0;
    long without_copy = 0;  // of them, durable writes that made no copy
    long waits_for_room = 0;
  };
  static WriteBehindCounts write_behind_counts();
};

}  // namespace flowio
