// MPI_File_* calls that open, describe and manage files (everything but the
// data calls and error handlers). Each forwards to the MPI library when the
// layer does not serve (activation.h).
#include <mpi.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "api/mpiio/activation.h"
#include "api/mpiio/errors.h"
#include "api/mpiio/layer_file.h"
#include "api/mpiio/requests.h"
#include "api/mpiio/sequential_mode.h"
#include "api/mpiio/serve.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "flowio/info.h"
#include "runtime/core/datatype_checks.h"
#include "runtime/engine/collective_error.h"

namespace flowio::mpiio {
namespace {

// ROMIO accepts "ufs:/path" and the like to name the file system driver;
// flowio has one driver, so the prefix is dropped.
std::string strip_file_system_prefix(const char* name) {
  const std::string path = name;
  const auto colon = path.find(':');
  if (colon == std::string::npos || colon < 2) return path;
  for (std::size_t i = 0; i < colon; ++i) {
    if (std::isalnum(static_cast<unsigned char>(path[i])) == 0) return path;
  }
  return path.substr(colon + 1);
}

// MPI_MODE_UNIQUE_OPEN is a promise flowio has no use for; MPI_MODE_SEQUENTIAL
// is the layer's to enforce (sequential_mode.h).
Mode mode_of(int amode) {
  const std::pair<int, Mode> bits[] = {
      {MPI_MODE_RDONLY, Mode::rdonly},
      {MPI_MODE_WRONLY, Mode::wronly},
      {MPI_MODE_RDWR, Mode::rdwr},
      {MPI_MODE_CREATE, Mode::create},
      {MPI_MODE_EXCL, Mode::excl},
      {MPI_MODE_APPEND, Mode::append},
      {MPI_MODE_DELETE_ON_CLOSE, Mode::delete_on_close},
  };
  Mode mode{};
  for (const auto& [bit, flag] : bits) {
    if ((amode & bit) != 0) mode = mode | flag;
  }
  return mode;
}

// Collective over `comm`: throws UsageError(`code`) on every process unless
// every process passed the same `value` (MPI requires it of some arguments;
// ROMIO checks them, with these classes).
void require_same_everywhere(MPI_Comm comm, MPI_Offset value, ErrorCode code, const char* what) {
  const MPI_Offset mine[2] = {value, -value};
  MPI_Offset extremes[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, extremes, 2, MPI_OFFSET, MPI_MAX, comm), "MPI_Allreduce");
  if (extremes[0] != -extremes[1]) {
    throw UsageError(code, std::string(what) + ": the processes passed different values");
  }
}

// MPI's rules for amode (MPI 4.0, 14.2.1), with ROMIO's class.
void check_amode(int amode) {
  const int exclusive_choices = ((amode & MPI_MODE_RDONLY) != 0 ? 1 : 0) +
                                ((amode & MPI_MODE_WRONLY) != 0 ? 1 : 0) +
                                ((amode & MPI_MODE_RDWR) != 0 ? 1 : 0);
  if (exclusive_choices != 1) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "MPI_File_open: give exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, "
                     "MPI_MODE_RDWR");
  }
  if ((amode & MPI_MODE_RDONLY) != 0 && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0) {
    throw UsageError(ErrorCode::invalid_access_mode,
                     "MPI_File_open: MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL");
  }
  check_sequential_amode(amode);
}

// Collective: open's arguments, checked with one allreduce. A process whose
// own are bad fails with their class, and every other process with the
// same class, rather than waiting in an open the bad one never reaches;
// amodes that differ fail everywhere with MPI_ERR_NOT_SAME.
void check_open_arguments(MPI_Comm comm, const char* filename, int amode) {
  std::exception_ptr bad;
  MPI_Offset bad_code = 0;  // the ErrorCode, plus one
  try {
    if (filename == nullptr) {
      throw UsageError(ErrorCode::invalid_argument, "MPI_File_open: no file name");
    }
    check_amode(amode);
  } catch (const UsageError& error) {
    bad = std::current_exception();
    bad_code = static_cast<MPI_Offset>(error.code()) + 1;
  }
  const MPI_Offset mine[3] = {bad_code, amode, -amode};
  MPI_Offset greatest[3] = {};
  check_mpi(MPI_Allreduce(mine, greatest, 3, MPI_OFFSET, MPI_MAX, comm), "MPI_Allreduce");
  if (bad) std::rethrow_exception(bad);
  if (greatest[0] != 0) {
    throw UsageError(static_cast<ErrorCode>(greatest[0] - 1),
                     "MPI_File_open: another process passed bad arguments");
  }
  if (greatest[1] != -greatest[2]) {
    throw UsageError(ErrorCode::not_same, "MPI_File_open: the processes passed different amodes");
  }
}

int fail_without_file(int error_class, const char* message) {
  return report(nullptr, MPI_FILE_NULL, error_code_with_message(error_class, message));
}

int open_file(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* handle) {
  *handle = MPI_FILE_NULL;
  if (comm == MPI_COMM_NULL) return fail_without_file(MPI_ERR_COMM, "MPI_File_open: MPI_COMM_NULL");
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (inter) return fail_without_file(MPI_ERR_COMM, "MPI_File_open: an intercommunicator");
  try {
    // Agreed on, so that a process without a name fails the call on every
    // process instead of leaving the others waiting in the open.
    check_open_arguments(comm, filename, amode);
    auto file = std::make_unique<LayerFile>();
    file->file =
        File::open(comm, strip_file_system_prefix(filename), mode_of(amode), hints_from_info(info));
    file->amode = amode;
    file->errhandler = default_handler();
    *handle = register_file(std::move(file));
    return MPI_SUCCESS;
  } catch (...) {
    return report(nullptr, MPI_FILE_NULL, error_code_of(std::current_exception()));
  }
}

// Runs the pieces of a close that involve other processes, in the same
// order everywhere, and releases the handle even when one of them fails.
int close_file(MPI_File* handle) {
  LayerFile* file = find_file(*handle);
  if (file == nullptr) {
    return report(nullptr, *handle,
                  error_code_with_message(MPI_ERR_FILE, "not an open file handle"));
  }
  const MPI_Errhandler handler = file->errhandler;
  int code = MPI_SUCCESS;
  try {
    if (file->split) file->split->done.wait();
    file->file.close();
  } catch (...) {
    code = error_code_of(std::current_exception());
  }
  complete_requests(*handle);
  const MPI_File closed = *handle;
  unregister_file(closed);
  *handle = MPI_FILE_NULL;
  return report(handler, closed, code);
}

int delete_file(const char* filename) {
  if (filename == nullptr) return fail_without_file(MPI_ERR_ARG, "MPI_File_delete: no file name");
  const std::string path = strip_file_system_prefix(filename);
  if (::unlink(path.c_str()) == 0) return MPI_SUCCESS;
  try {
    throw_errno(errno, "MPI_File_delete: unlink " + path);
  } catch (...) {
    return report(nullptr, MPI_FILE_NULL, error_code_of(std::current_exception()));
  }
}

Whence whence_of(int whence) {
  if (whence == MPI_SEEK_SET) return Whence::set;
  if (whence == MPI_SEEK_CUR) return Whence::current;
  if (whence == MPI_SEEK_END) return Whence::end;
  throw UsageError(ErrorCode::invalid_argument, "seek: whence is not MPI_SEEK_SET/CUR/END");
}

void no_split_pending(const LayerFile& file, const char* call) {
  if (file.split) {
    throw UsageError(ErrorCode::invalid_argument,
                     std::string(call) + ": a split collective is still in progress");
  }
}

// Error classes follow ROMIO's, so that programs that test them behave
// alike: a missing type, a negative displacement or a filetype that is no
// whole number of etypes is MPI_ERR_ARG; a filetype with negative or
// decreasing displacements is MPI_ERR_IO.
void check_view_arguments(const LayerFile& file, MPI_Offset disp, MPI_Datatype etype,
                          MPI_Datatype filetype) {
  if (etype == MPI_DATATYPE_NULL || filetype == MPI_DATATYPE_NULL) {
    throw UsageError(ErrorCode::invalid_argument, "MPI_File_set_view: MPI_DATATYPE_NULL");
  }
  core::require_committed(etype, "MPI_File_set_view: the etype");
  core::require_committed(filetype, "MPI_File_set_view: the filetype");
  check_sequential_displacement(file, disp);
  if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) {
    throw UsageError(ErrorCode::invalid_argument,
                     "MPI_File_set_view: invalid displacement argument: negative displacement " +
                         std::to_string(disp));
  }
  // The large-count sizes: MPI_Type_size says MPI_UNDEFINED past 2^31 - 1.
  MPI_Count etype_size = 0, filetype_size = 0;
  MPI_Type_size_x(etype, &etype_size);
  MPI_Type_size_x(filetype, &filetype_size);
  if (etype_size <= 0 || filetype_size % etype_size != 0) {
    throw UsageError(ErrorCode::invalid_argument,
                     "MPI_File_set_view: the filetype is not a whole number of etypes");
  }
}

// The predefined representations' names as MPI spells them, for
// MPI_File_get_view: ROMIO also accepts them in upper case.
std::string canonical_datarep(const char* datarep) {
  for (const char* name : {"native", "internal", "external32"}) {
    if (strcasecmp(datarep, name) == 0) return name;
  }
  return datarep;
}

// Error classes follow ROMIO's, so that programs that test them behave
// alike: a missing type, a negative displacement or a filetype that is no
// whole number of etypes is MPI_ERR_ARG; a filetype with negative or
// decreasing displacements is MPI_ERR_IO. The argument checks are agreed
// on before the collective part, so a bad view on one process fails the
// call on every process, with that process's error class, instead of
// leaving the others waiting.
void set_view(LayerFile& file, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
              const char* datarep, MPI_Info info) {
  no_split_pending(file, "MPI_File_set_view");
  std::exception_ptr bad_arguments;
  int bad_code = 0;  // the ErrorCode of bad arguments, plus one
  try {
    check_view_arguments(file, disp, etype, filetype);
  } catch (const UsageError& error) {
    bad_arguments = std::current_exception();
    bad_code = static_cast<int>(error.code()) + 1;
  }
  // Whether any process passed bad arguments, and which class of error, so
  // that every process fails with the same one.
  int worst_code = 0;
  check_mpi(MPI_Allreduce(&bad_code, &worst_code, 1, MPI_INT, MPI_MAX, file.file.communicator()),
            "MPI_Allreduce");
  if (bad_arguments) std::rethrow_exception(bad_arguments);
  if (worst_code != 0) {
    throw UsageError(static_cast<ErrorCode>(worst_code - 1),
                     "MPI_File_set_view: another process passed an invalid view");
  }
  if (disp == MPI_DISPLACEMENT_CURRENT) disp = current_displacement(file);
  // flowio's set_view resets both file pointers, as MPI says.
  try {
    file.file.set_view(disp, etype, filetype, hints_from_info(info), datarep);
  } catch (const UsageError& error) {
    if (error.code() != ErrorCode::invalid_datatype) throw;
    throw IoError(ErrorCode::io, error.what(), 0);
  }
  file.remember_view(disp, etype, filetype, canonical_datarep(datarep).c_str());
}

void seek_shared(LayerFile& file, MPI_Offset offset, int whence) {
  require_random_access(file, "MPI_File_seek_shared");
  require_same_everywhere(file.file.communicator(), offset, ErrorCode::invalid_argument,
                          "MPI_File_seek_shared: offset");
  require_same_everywhere(file.file.communicator(), whence, ErrorCode::invalid_argument,
                          "MPI_File_seek_shared: whence");
  file.file.seek_shared(offset, whence_of(whence));
}

// flowio's own atomic mode (locks over MPI, collective calls kept
// collective), with the lock the file's hints choose: flowio_lock=fcntl
// takes the file system's locks instead.
void set_atomicity(LayerFile& file, int flag) {
  no_split_pending(file, "MPI_File_set_atomicity");
  file.file.set_atomicity(flag != 0);
}

// MPI_File_get_type_extent and its _c twin, whose extents are MPI_Aint and
// MPI_Count: `call` names the one called in errors.
template <typename Extent>
int get_type_extent(MPI_File handle, MPI_Datatype datatype, Extent* extent, const char* call) {
  return serve(handle, [&](LayerFile& file) {
    core::require_committed(datatype, (std::string(call) + ": the datatype").c_str());
    *extent = static_cast<Extent>(file.file.type_extent(datatype));
  });
}

}  // namespace
}  // namespace flowio::mpiio

using namespace flowio;
using namespace flowio::mpiio;

int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  if (forwarding()) return PMPI_File_open(comm, filename, amode, info, fh);
  return open_file(comm, filename, amode, info, fh);
}

int MPI_File_close(MPI_File* fh) {
  if (forwarding()) return PMPI_File_close(fh);
  return close_file(fh);
}

int MPI_File_delete(const char* filename, MPI_Info info) {
  if (forwarding()) return PMPI_File_delete(filename, info);
  return delete_file(filename);
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  if (forwarding()) return PMPI_File_set_size(fh, size);
  return serve(fh, [&](LayerFile& file) {
    require_random_access(file, "MPI_File_set_size");
    require_same_everywhere(file.file.communicator(), size, ErrorCode::invalid_argument,
                            "MPI_File_set_size");
    file.file.set_size(size);
  });
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  if (forwarding()) return PMPI_File_preallocate(fh, size);
  return serve(fh, [&](LayerFile& file) {
    require_same_everywhere(file.file.communicator(), size, ErrorCode::invalid_argument,
                            "MPI_File_preallocate");
    file.file.preallocate(size);
  });
}

int MPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  if (forwarding()) return PMPI_File_get_size(fh, size);
  return serve(fh, [&](LayerFile& file) { *size = file.file.size(); });
}

int MPI_File_get_group(MPI_File fh, MPI_Group* group) {
  if (forwarding()) return PMPI_File_get_group(fh, group);
  return serve(fh, [&](LayerFile& file) {
    check_mpi(MPI_Comm_group(file.file.communicator(), group), "MPI_Comm_group");
  });
}

int MPI_File_get_amode(MPI_File fh, int* amode) {
  if (forwarding()) return PMPI_File_get_amode(fh, amode);
  return serve(fh, [&](LayerFile& file) { *amode = file.amode; });
}

int MPI_File_set_info(MPI_File fh, MPI_Info info) {
  if (forwarding()) return PMPI_File_set_info(fh, info);
  return serve(fh, [&](LayerFile& file) { file.file.set_hints(hints_from_info(info)); });
}

int MPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  if (forwarding()) return PMPI_File_get_info(fh, info_used);
  return serve(fh, [&](LayerFile& file) { *info_used = Info(file.file.hints()).release(); });
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char* datarep, MPI_Info info) {
  if (forwarding()) return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  if (datarep == nullptr) {
    return report(find_file(fh), fh,
                  error_code_with_message(MPI_ERR_UNSUPPORTED_DATAREP,
                                          "MPI_File_set_view: no data representation given"));
  }
  return serve(fh, [&](LayerFile& file) { set_view(file, disp, etype, filetype, datarep, info); });
}

int MPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                      char* datarep) {
  if (forwarding()) return PMPI_File_get_view(fh, disp, etype, filetype, datarep);
  return serve(fh, [&](LayerFile& file) {
    *disp = file.displacement;
    *etype = duplicate_unless_named(file.etype);
    *filetype = duplicate_unless_named(file.filetype);
    std::strcpy(datarep, file.datarep.c_str());
  });
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  if (forwarding()) return PMPI_File_seek(fh, offset, whence);
  return serve(fh, [&](LayerFile& file) {
    require_random_access(file, "MPI_File_seek");
    file.file.seek(offset, whence_of(whence));
  });
}

int MPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  if (forwarding()) return PMPI_File_get_position(fh, offset);
  return serve(fh, [&](LayerFile& file) { *offset = file.file.position(); });
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  if (forwarding()) return PMPI_File_get_byte_offset(fh, offset, disp);
  return serve(fh, [&](LayerFile& file) { *disp = file.file.byte_offset(offset); });
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  if (forwarding()) return PMPI_File_seek_shared(fh, offset, whence);
  return serve(fh, [&](LayerFile& file) { seek_shared(file, offset, whence); });
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  if (forwarding()) return PMPI_File_get_position_shared(fh, offset);
  return serve(fh, [&](LayerFile& file) {
    require_random_access(file, "MPI_File_get_position_shared");
    *offset = file.file.position_shared();
  });
}

// The extent in the file, under the current view's data representation.
int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  if (forwarding()) return PMPI_File_get_type_extent(fh, datatype, extent);
  return get_type_extent(fh, datatype, extent, "MPI_File_get_type_extent");
}

int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count* extent) {
  if (forwarding()) return PMPI_File_get_type_extent_c(fh, datatype, extent);
  return get_type_extent(fh, datatype, extent, "MPI_File_get_type_extent_c");
}

int MPI_File_set_atomicity(MPI_File fh, int flag) {
  if (forwarding()) return PMPI_File_set_atomicity(fh, flag);
  return serve(fh, [&](LayerFile& file) { set_atomicity(file, flag); });
}

int MPI_File_get_atomicity(MPI_File fh, int* flag) {
  if (forwarding()) return PMPI_File_get_atomicity(fh, flag);
  return serve(fh, [&](LayerFile& file) { *flag = file.file.atomicity() ? 1 : 0; });
}

int MPI_File_sync(MPI_File fh) {
  if (forwarding()) return PMPI_File_sync(fh);
  // ROMIO's class for this one case.
  if (fh == MPI_FILE_NULL) return fail_without_file(MPI_ERR_ARG, "MPI_File_sync: MPI_FILE_NULL");
  return serve(fh, [&](LayerFile& file) { file.file.sync(); });
}

MPI_Fint MPI_File_c2f(MPI_File fh) {
  if (forwarding()) return PMPI_File_c2f(fh);
  return fortran_handle_of(fh);
}

MPI_File MPI_File_f2c(MPI_Fint fh) {
  if (forwarding()) return PMPI_File_f2c(fh);
  return handle_of_fortran(fh);
}
