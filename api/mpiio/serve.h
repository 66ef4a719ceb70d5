// serve(): the frame of every MPI_File_* call the layer answers itself.
// Looks the handle up, runs the call's body on its LayerFile, and turns a
// failure into an MPI error code through the file's error handler.
#pragma once

#include <mpi.h>

#include <exception>

#include "api/mpiio/errors.h"
#include "api/mpiio/layer_file.h"

namespace flowio::mpiio {

template <typename Body>
int serve(MPI_File handle, Body&& body) {
  LayerFile* file = find_file(handle);
  if (file == nullptr) {
    return report(nullptr, handle,
                  error_code_with_message(MPI_ERR_FILE, "not an open file handle"));
  }
  try {
    body(*file);
    return MPI_SUCCESS;
  } catch (...) {
    return report(file, handle, error_code_of(std::current_exception()));
  }
}

}  // namespace flowio::mpiio
