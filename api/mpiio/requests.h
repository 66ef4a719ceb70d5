// Statuses and requests the MPI way: every data call fills the status it is
// given with the bytes it moved, and nonblocking calls return generalized
// requests (MPI_Grequest_start) that flowio completes when the operation's
// Future is ready, so MPI_Wait, MPI_Test and their -all/-any/-some forms
// work on them unchanged.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "flowio/future.h"

namespace flowio::mpiio {

struct LayerFile;

// Fills `status` (unless MPI_STATUS_IGNORE): `bytes` for MPI_Get_count and
// MPI_Get_elements, not cancelled, no error.
void fill_status(MPI_Status* status, std::size_t bytes);

// Starts a generalized request that completes with `operation`. A failure
// of the operation becomes the request's error code (MPI_Wait returns it)
// after the file's error handler has seen it.
int start_request(Future<std::size_t> operation, LayerFile& file, MPI_File handle,
                  MPI_Request* request);

}  // namespace flowio::mpiio
