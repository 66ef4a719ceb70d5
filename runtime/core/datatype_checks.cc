#include "runtime/core/datatype_checks.h"

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

}  // namespace

void require_committed(MPI_Datatype type, const char* role) {
  if (type == MPI_DATATYPE_NULL) {
    throw UsageError(ErrorCode::invalid_datatype, std::string(role) + " is MPI_DATATYPE_NULL");
  }
  // Predefined, hence committed: MPI_BYTE is the type of nearly every
  // small call (HDF5's), which should not pay for the probe.
  if (type == MPI_BYTE) return;
  int bytes = 0;
  if (PMPI_Pack_size(1, type, probe_communicator(), &bytes) != MPI_SUCCESS) {
    throw UsageError(ErrorCode::invalid_datatype,
                     std::string(role) + " is not a committed datatype");
  }
  // MPICH 4.0.2 answers for a freed derived type without an error, with
  // the poisoned size of its released object (negative).
  if (bytes < 0) {
    throw UsageError(ErrorCode::invalid_datatype,
                     std::string(role) + " is not a valid datatype (freed?)");
  }
}

}  // namespace flowio::core
