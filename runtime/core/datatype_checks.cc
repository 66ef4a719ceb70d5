#include "runtime/core/datatype_checks.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "flowio/error.h"

namespace flowio::core {
namespace {

// MPI has no query for "committed", but MPICH refuses an uncommitted type
// in MPI_Pack_size. The call runs on a private communicator that returns
// errors, so the program's own handlers never see the probe, and through
// PMPI, so that profiling tools do not count it as the program's.
MPI_Comm probe_communicator() {
  static const MPI_Comm comm = [] {
    MPI_Comm dup = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_SELF, &dup);
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    return dup;
  }();
  return comm;
}

// MPICH 4.0.2 keeps a freed datatype's object on a free list whose link
// overwrites the object's size field: a freed type answers size queries
// without an error, with the address of the next free datatype object (or
// 0 at the end of the list, which no check can tell from an empty type).
// So a size is such a link when it is the address of an object that
// starts with a derived datatype's handle: MPICH's handle word, kind
// direct (2) or indirect (3) in bits 30-31, object kind datatype (3) in
// bits 26-29. No real size is an address of that: executables are linked
// at 4 MiB or above, so no object of MPICH's lies lower, and objects are
// 8-byte aligned. The word is read with process_vm_readv, which fails
// cleanly where nothing is mapped.
bool is_free_list_link(MPI_Count size) {
  constexpr MPI_Count kLowestObject = MPI_Count{4} << 20;
  if (size < kLowestObject || size % 8 != 0) return false;
  std::uint32_t word = 0;
  iovec local{&word, sizeof word};
  iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(size)), sizeof word};
  if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) !=
      static_cast<ssize_t>(sizeof word)) {
    return false;
  }
  const std::uint32_t kind = word >> 30;
  const std::uint32_t object = (word >> 26) & 0xF;
  return (kind == 2 || kind == 3) && object == 3;
}

}  // namespace

void require_committed(MPI_Datatype type, const char* role) {
  if (type == MPI_DATATYPE_NULL) {
    throw UsageError(ErrorCode::invalid_datatype, std::string(role) + " is MPI_DATATYPE_NULL");
  }
  // Predefined, hence committed: MPI_BYTE is the type of nearly every
  // small call (HDF5's), which should not pay for the probe.
  if (type == MPI_BYTE) return;
  // The large-count query: the int one answers MPI_UNDEFINED for a type of
  // 2 GiB or more.
  MPI_Count bytes = 0;
  if (PMPI_Pack_size_c(1, type, probe_communicator(), &bytes) != MPI_SUCCESS) {
    throw UsageError(ErrorCode::invalid_datatype,
                     std::string(role) + " is not a committed datatype");
  }
  if (bytes < 0 || is_free_list_link(bytes)) {
    throw UsageError(ErrorCode::invalid_datatype,
                     std::string(role) + " is not a valid datatype (freed?)");
  }
}

}  // namespace flowio::core
