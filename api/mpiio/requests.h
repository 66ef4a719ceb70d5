// Statuses and requests the MPI way: every data call fills the status it is
// given with the bytes it moved, and nonblocking calls return generalized
// requests that flowio completes when the operation's Future is ready, so
// MPI_Wait, MPI_Test and their -all/-any/-some forms work on them
// unchanged.
//
// Who completes a request (calls MPI_Grequest_complete, which takes MPI's
// lock): the requests are MPICH's extended generalized requests
// (MPIX_Grequest_start), whose poll function MPI_Wait, MPI_Test and the
// -any/-some forms call with MPI's lock released, and whose wait function
// MPI_Waitall calls the same way. Once a waiter has polled a request, the
// waiter completes it, from inside the poll or wait function; the thread
// that finishes the operation then makes no MPI call at all. (Before,
// that thread called MPI_Grequest_complete while the waiter spun inside
// MPI_Wait holding MPI's lock: on 2 ranks an iwrite_at + MPI_Wait cost 8
// times MPICH's, 3.3 ms at worst.) A request nobody polls yet is
// completed by the finishing thread, so MPI_Request_get_status (which MPICH
// 4.0.2 does not poll; the layer defines it to look first) and programs
// that wait later see it complete. Operations done at the call (small
// independent accesses) complete their request before the call returns.
// A waiter that polls again within 50 us (a wait loop, not a test between
// computations) sleeps up to 200 us on the operation instead of spinning.
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

// Completes every request of `handle` that nobody has completed yet,
// waiting for their operations: at MPI_File_close (and MPI_Finalize, with
// MPI_FILE_NULL for all files), for requests the program freed with
// MPI_Request_free or never waited for.
void complete_requests(MPI_File handle);

}  // namespace flowio::mpiio
