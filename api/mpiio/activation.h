// Whether the MPI-IO layer serves MPI_File_* calls with flowio or forwards
// them to the MPI library's own MPI-IO (PMPI_File_*).
//
// The choice is made once per process, before the first file call, and
// never changes: a file handle of one kind must never reach the other.
// The layer serves unless FLOWIO_MPIIO=off, or MPI runs below
// MPI_THREAD_MULTIPLE (flowio's threads call MPI; the layer asks for
// MULTIPLE itself when it intercepts MPI_Init, so this happens only when
// the library cannot provide it). Forwarding for that reason is said once,
// on rank 0's stderr.
#pragma once

namespace flowio::mpiio {

// True when FLOWIO_MPIIO=off: the layer forwards everything, MPI_Init
// included, so one binary runs both ways.
bool switched_off();

// Called by the intercepted MPI_Init / MPI_Init_thread once MPI runs:
// `asked` is the thread level the program asked for, `provided` the one MPI
// gave the layer.
void note_initialized(int asked, int provided);

// The thread level to report to the program (what it asked for, capped by
// what MPI provides), or -1 when MPI was initialized without the layer
// seeing it.
int program_thread_level();

// True when file calls go to the MPI library's MPI-IO; counts the call
// either way for the report (FLOWIO_MPIIO_REPORT=1).
bool forwarding();

// Prints "flowio-mpiio: served N file calls, forwarded M, datatypes kept
// K, writes behind W (waited for room R)" on stderr when
// FLOWIO_MPIIO_REPORT=1 (the tests use it to prove the layer was in use,
// and that it freed every datatype it made: K is `kept_datatypes`, which
// must be 0 by then).
void report_at_finalize(long kept_datatypes);

}  // namespace flowio::mpiio
