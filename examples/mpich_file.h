// MpichFile: an MPI-IO file of MPICH's own implementation (ROMIO) on
// MPI_COMM_WORLD, opened at construction and closed (collectively) with
// the handle unless close() was called.
#pragma once

#include <mpi.h>

#include <string>

#include "flowio/flowio.h"

namespace insitu {

class MpichFile {
 public:
  // Collective; throws flowio::MpiError.
  MpichFile(const std::string& path, int mode) {
    flowio::check_mpi(MPI_File_open(MPI_COMM_WORLD, path.c_str(), mode, MPI_INFO_NULL, &file_),
                      "MPI_File_open");
  }
  MpichFile(const MpichFile&) = delete;
  MpichFile& operator=(const MpichFile&) = delete;
  ~MpichFile() {
    if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  }
  MPI_File get() const { return file_; }
  // Collective; throws flowio::MpiError.
  void close() { flowio::check_mpi(MPI_File_close(&file_), "MPI_File_close"); }

 private:
  MPI_File file_ = MPI_FILE_NULL;
};

}  // namespace insitu
