// MPI_File_create_errhandler, _set_, _get_ and _call_errhandler. Handlers
// set on MPI_FILE_NULL apply to failed opens and to files opened later.
#include <mpi.h>

#include "api/mpiio/activation.h"
#include "api/mpiio/errors.h"
#include "api/mpiio/layer_file.h"
#include "api/mpiio/serve.h"

using namespace flowio::mpiio;

// The handler object itself comes from MPI, so MPI_Errhandler_free and
// comparisons work on it; the layer remembers which function it calls.
int MPI_File_create_errhandler(MPI_File_errhandler_function* function,
                               MPI_Errhandler* errhandler) {
  if (forwarding()) return PMPI_File_create_errhandler(function, errhandler);
  const int created = PMPI_File_create_errhandler(function, errhandler);
  if (created == MPI_SUCCESS) remember_handler(*errhandler, function);
  return created;
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  if (forwarding()) return PMPI_File_set_errhandler(file, errhandler);
  if (errhandler == MPI_ERRHANDLER_NULL) {
    return report(find_file(file), file,
                  error_code_with_message(MPI_ERR_ARG, "MPI_File_set_errhandler: MPI_ERRHANDLER_NULL"));
  }
  if (file == MPI_FILE_NULL) {
    set_default_handler(errhandler);
    return MPI_SUCCESS;
  }
  return serve(file, [&](LayerFile& open) { open.errhandler = errhandler; });
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  if (forwarding()) return PMPI_File_get_errhandler(file, errhandler);
  if (file == MPI_FILE_NULL) {
    *errhandler = default_handler();
    return MPI_SUCCESS;
  }
  return serve(file, [&](LayerFile& open) { *errhandler = open.errhandler; });
}

int MPI_File_call_errhandler(MPI_File file, int errorcode) {
  if (forwarding()) return PMPI_File_call_errhandler(file, errorcode);
  if (file == MPI_FILE_NULL) {
    report(nullptr, file, errorcode);
    return MPI_SUCCESS;
  }
  return serve(file, [&](LayerFile& open) { report(&open, file, errorcode); });
}
