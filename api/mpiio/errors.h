// How the layer reports failures the MPI way: an error code whose class is
// the standard MPI-IO one (MPI_ERR_IO, MPI_ERR_NO_SPACE, ...), passed to the
// file's error handler (files start with MPI_ERRORS_RETURN, as MPI says),
// then returned.
//
// Error handlers created with MPI_File_create_errhandler are recorded here,
// so the layer can call them with its own file handles.
#pragma once

#include <mpi.h>

#include <exception>

namespace flowio::mpiio {

struct LayerFile;

// The MPI error code for a failure caught by the layer: of the error class
// that matches the flowio ErrorCode, carrying flowio's message for
// MPI_Error_string (made by MPICH's own MPIR_Err_create_code, which its
// MPI-IO uses too; codes added with MPI_Add_error_code would carry it as
// well, but MPICH 4.0.2 returns another code's text for added codes of
// predefined classes). The message is also kept for a fatal error handler
// to print.
int error_code_of(std::exception_ptr failure);

// `error_class`, remembering `message` as error_code_of does.
int error_code_with_message(int error_class, const char* message);

// Runs `handler` on `code` for `handle` and returns `code`.
int report(MPI_Errhandler handler, MPI_File handle, int code);
// The same with the handler of `file`, or, when nullptr, the one for
// MPI_FILE_NULL (which also covers failed opens).
int report(LayerFile* file, MPI_File handle, int code);

// Records the function behind a handler made by MPI_File_create_errhandler.
void remember_handler(MPI_Errhandler handler, MPI_File_errhandler_function* function);

// The handler for calls on MPI_FILE_NULL and files opened from now on.
MPI_Errhandler default_handler();
void set_default_handler(MPI_Errhandler handler);

}  // namespace flowio::mpiio
