// LayerFile: what an MPI_File handle given out by the layer stands for, and
// the table that turns handles (C pointers and Fortran integers) back into
// LayerFiles.
//
// A handle is the LayerFile's address. Every call looks it up in the table
// first, so a stale or foreign handle is an MPI_ERR_FILE, not a crash.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flowio/file.h"
#include "flowio/future.h"

namespace flowio::mpiio {

// A split collective started by a *_begin call and not yet ended.
struct SplitCollective {
  Future<std::size_t> done;
  const void* buffer = nullptr;  // the *_end call must name the same buffer
};

struct LayerFile {
  File file;
  int amode = 0;
  MPI_Errhandler errhandler = MPI_ERRORS_RETURN;
  // The view as the program gave it, for MPI_File_get_view. Derived types
  // are our own duplicates.
  MPI_Offset displacement = 0;
  MPI_Datatype etype = MPI_BYTE;
  MPI_Datatype filetype = MPI_BYTE;
  std::string datarep = "native";
  std::optional<SplitCollective> split;
  int fortran_handle = 0;

  LayerFile() = default;
  LayerFile(const LayerFile&) = delete;
  LayerFile& operator=(const LayerFile&) = delete;
  ~LayerFile();

  // Records a new view, duplicating derived types (the program may free
  // its own right after MPI_File_set_view).
  void remember_view(MPI_Offset disp, MPI_Datatype new_etype, MPI_Datatype new_filetype,
                     const char* representation);
  // Size in bytes of one etype of the current view.
  MPI_Count etype_size() const;
};

// `type` itself when it is a named type, else a duplicate the caller owns
// (what MPI_File_get_view hands out, and what a LayerFile keeps).
MPI_Datatype duplicate_unless_named(MPI_Datatype type);

// Derived datatypes that LayerFiles hold (their views' duplicates). Every
// one is freed when its file closes, or at MPI_Finalize for files left
// open: the count is 0 then, which the report at finalize shows.
long kept_datatypes();

// Takes ownership; returns the handle the program will see.
MPI_File register_file(std::unique_ptr<LayerFile> file);
// The LayerFile behind `handle`, or nullptr when it is MPI_FILE_NULL or
// not a handle the layer gave out (or already closed).
LayerFile* find_file(MPI_File handle);
// Removes `handle` from the table and returns its LayerFile.
std::unique_ptr<LayerFile> unregister_file(MPI_File handle);
// Every file still open, for MPI_Finalize (which must stop flowio's
// threads before MPI stops).
std::vector<std::unique_ptr<LayerFile>> unregister_all_files();

// MPI_File_c2f / MPI_File_f2c: Fortran handles are small integers, 0 for
// MPI_FILE_NULL.
MPI_Fint fortran_handle_of(MPI_File handle);
MPI_File handle_of_fortran(MPI_Fint fortran);

}  // namespace flowio::mpiio
