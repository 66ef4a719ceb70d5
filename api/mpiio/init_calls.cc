// MPI_Init, MPI_Init_thread, MPI_Query_thread and MPI_Finalize, intercepted
// because flowio's threads call MPI, which MPICH allows only at
// MPI_THREAD_MULTIPLE: the layer initializes MPI at that level whatever the
// program asks for, and tells the program the level it asked for (which it
// may rely on, e.g. to decide whether to spawn threads). MPI_Is_thread_main
// stays truthful untouched: MPI is still initialized on the program's
// thread.
#include <mpi.h>

#include "api/mpiio/activation.h"
#include "api/mpiio/layer_file.h"
#include "api/mpiio/requests.h"
#include "runtime/engine/engine.h"

using namespace flowio::mpiio;

namespace {

// MPI_Init gives MPI_THREAD_SINGLE in MPICH unless configured otherwise.
constexpr int kLevelOfPlainInit = MPI_THREAD_SINGLE;

int initialize(int* argc, char*** argv, int asked, int* provided) {
  if (switched_off()) {
    const int code = PMPI_Init_thread(argc, argv, asked, provided != nullptr ? provided : &asked);
    if (code == MPI_SUCCESS) note_initialized(asked, provided != nullptr ? *provided : asked);
    return code;
  }
  int got = MPI_THREAD_SINGLE;
  const int code = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
  if (code != MPI_SUCCESS) return code;
  note_initialized(asked, got);
  if (provided != nullptr) *provided = program_thread_level();
  return MPI_SUCCESS;
}

}  // namespace

int MPI_Init(int* argc, char*** argv) { return initialize(argc, argv, kLevelOfPlainInit, nullptr); }

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return initialize(argc, argv, required, provided);
}

int MPI_Query_thread(int* provided) {
  const int level = program_thread_level();
  if (level < 0) return PMPI_Query_thread(provided);
  *provided = level;
  return MPI_SUCCESS;
}

// Files left open are released first (locally, without the collective part
// of a close, as MPI leaves them undefined), then the process's hold on
// flowio's engine, so flowio's threads stop before MPI does. MPI_Finalize
// itself frees the shared-pointer windows (collectively, api/shared_pointer.h).
int MPI_Finalize() {
  unregister_all_files();
  complete_requests(MPI_FILE_NULL);
  flowio::runtime::Engine::release();
  report_at_finalize(kept_datatypes());
  return PMPI_Finalize();
}
