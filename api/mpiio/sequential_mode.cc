#include "api/mpiio/sequential_mode.h"

#include <string>

#include "api/mpiio/layer_file.h"
#include "flowio/error.h"

namespace flowio::mpiio {

bool is_sequential(const LayerFile& file) { return (file.amode & MPI_MODE_SEQUENTIAL) != 0; }

void check_sequential_amode(int amode) {
  if ((amode & MPI_MODE_SEQUENTIAL) != 0 && (amode & MPI_MODE_RDWR) != 0) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "MPI_File_open: MPI_MODE_SEQUENTIAL cannot be combined with MPI_MODE_RDWR");
  }
}

void require_random_access(const LayerFile& file, const char* call) {
  if (!is_sequential(file)) return;
  throw UsageError(ErrorCode::unsupported,
                   std::string(call) +
                       ": the file was opened with MPI_MODE_SEQUENTIAL, where only the shared "
                       "file pointer (the *_shared and *_ordered calls) may be used");
}

void check_sequential_displacement(const LayerFile& file, MPI_Offset displacement) {
  const bool current = displacement == MPI_DISPLACEMENT_CURRENT;
  if (is_sequential(file) && !current) {
    throw UsageError(ErrorCode::invalid_argument,
                     "MPI_File_set_view: the file was opened with MPI_MODE_SEQUENTIAL: the "
                     "displacement must be MPI_DISPLACEMENT_CURRENT");
  }
  if (!is_sequential(file) && current) {
    throw UsageError(ErrorCode::invalid_argument,
                     "MPI_File_set_view: MPI_DISPLACEMENT_CURRENT is only valid on a file opened "
                     "with MPI_MODE_SEQUENTIAL");
  }
}

MPI_Offset current_displacement(LayerFile& file) {
  MPI_Comm comm = file.file.communicator();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // {found, displacement}: a failure on rank 0 must reach every process.
  MPI_Offset answer[2] = {0, 0};
  if (rank == 0) {
    try {
      answer[1] = file.file.byte_offset(file.file.position_shared());
      answer[0] = 1;
    } catch (const Error&) {
      answer[0] = 0;
    }
  }
  check_mpi(MPI_Bcast(answer, 2, MPI_OFFSET, 0, comm), "MPI_Bcast");
  if (answer[0] == 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "MPI_File_set_view: the shared file pointer has no place in the current view");
  }
  return answer[1];
}

}  // namespace flowio::mpiio
