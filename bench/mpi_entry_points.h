// The MPI-IO interface through one set of entry points, so that one
// benchmark binary measures flowio's MPI-IO layer and MPICH's own MPI-IO
// side by side: kLayer calls MPI_File_*, which are the layer's in a binary
// that links this library (it links //api/mpiio, whose definitions win over
// MPICH's weak MPI_File_* symbols: the path an unmodified MPI-IO program
// takes with the layer); kMpich calls PMPI_File_*, MPICH's MPI-IO (ROMIO)
// underneath the layer.
//
// A file handle belongs to the set that opened it: passing it to the other
// set's calls is undefined (the layer's handles are not ROMIO's).
#pragma once

#include <mpi.h>

namespace bench {

struct MpiEntryPoints {
  const char* name;  // "layer" or "mpich", as the benchmarks print it
  decltype(&MPI_File_open) open;
  decltype(&MPI_File_close) close;
  decltype(&MPI_File_sync) sync;
  decltype(&MPI_File_write_at) write_at;
  decltype(&MPI_File_read_at) read_at;
  decltype(&MPI_File_iwrite_at) iwrite_at;
  decltype(&MPI_File_write_at_all) write_at_all;
  decltype(&MPI_File_read_at_all) read_at_all;
  decltype(&MPI_File_set_view) set_view;
  decltype(&MPI_File_seek) seek;
  decltype(&MPI_File_write) write;
  decltype(&MPI_File_read) read;
};

inline constexpr MpiEntryPoints kLayer = {
    .name = "layer",
    .open = MPI_File_open,
    .close = MPI_File_close,
    .sync = MPI_File_sync,
    .write_at = MPI_File_write_at,
    .read_at = MPI_File_read_at,
    .iwrite_at = MPI_File_iwrite_at,
    .write_at_all = MPI_File_write_at_all,
    .read_at_all = MPI_File_read_at_all,
    .set_view = MPI_File_set_view,
    .seek = MPI_File_seek,
    .write = MPI_File_write,
    .read = MPI_File_read,
};

inline constexpr MpiEntryPoints kMpich = {
    .name = "mpich",
    .open = PMPI_File_open,
    .close = PMPI_File_close,
    .sync = PMPI_File_sync,
    .write_at = PMPI_File_write_at,
    .read_at = PMPI_File_read_at,
    .iwrite_at = PMPI_File_iwrite_at,
    .write_at_all = PMPI_File_write_at_all,
    .read_at_all = PMPI_File_read_at_all,
    .set_view = PMPI_File_set_view,
    .seek = PMPI_File_seek,
    .write = PMPI_File_write,
    .read = PMPI_File_read,
};

}  // namespace bench
