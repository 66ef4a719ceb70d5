// MPI_MODE_SEQUENTIAL (MPI 4.1, 14.2.1, 14.3, 14.4): a file opened for
// sequential access is read and written only through the shared file
// pointer (the *_shared and *_ordered calls), and its views start at
// MPI_DISPLACEMENT_CURRENT, where the shared file pointer is. MPI calls the
// other accesses erroneous; the layer refuses what MPICH 4.0.2 refuses
// (accesses at explicit offsets and individual pointers, seek, seek_shared,
// get_position_shared, set_size), with its error classes, so that programs
// see what they see on MPICH; get_position and get_byte_offset answer, as
// on MPICH.
#pragma once

#include <mpi.h>

namespace flowio::mpiio {

struct LayerFile;

bool is_sequential(const LayerFile& file);

// For MPI_File_open: MPI_MODE_SEQUENTIAL with MPI_MODE_RDWR is erroneous
// (UsageError(invalid_access_mode), MPI_ERR_AMODE).
void check_sequential_amode(int amode);

// Throws UsageError(unsupported) (MPI_ERR_UNSUPPORTED_OPERATION) naming
// `call` when the file was opened with MPI_MODE_SEQUENTIAL.
void require_random_access(const LayerFile& file, const char* call);

// For MPI_File_set_view: MPI_DISPLACEMENT_CURRENT exactly on sequential
// files (UsageError(invalid_argument), MPI_ERR_ARG, otherwise).
void check_sequential_displacement(const LayerFile& file, MPI_Offset displacement);

// Collective: the byte displacement MPI_DISPLACEMENT_CURRENT stands for,
// the file offset of the shared file pointer in the current view (rank 0
// reads the pointer and tells the others, so that every process agrees).
MPI_Offset current_displacement(LayerFile& file);

}  // namespace flowio::mpiio
