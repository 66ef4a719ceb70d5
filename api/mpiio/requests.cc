#include "api/mpiio/requests.h"

#include <cstdint>
#include <exception>

#include "api/mpiio/errors.h"
#include "api/mpiio/layer_file.h"

namespace flowio::mpiio {
namespace {

// What the query function reports; written once by the completing thread
// before MPI_Grequest_complete, read by MPI after it.
struct Outcome {
  std::size_t bytes = 0;
  int error = MPI_SUCCESS;
};

int query(void* state, MPI_Status* status) {
  const Outcome& outcome = *static_cast<Outcome*>(state);
  fill_status(status, outcome.bytes);
  status->MPI_ERROR = outcome.error;
  return outcome.error;
}

int release(void* state) {
  delete static_cast<Outcome*>(state);
  return MPI_SUCCESS;
}

// flowio operations cannot be withdrawn once started; MPI allows a cancel
// that does nothing when the operation completes anyway.
int cancel(void*, int) { return MPI_SUCCESS; }

}  // namespace

void fill_status(MPI_Status* status, std::size_t bytes) {
  if (status == MPI_STATUS_IGNORE) return;
#if defined(MPICH_VERSION)
  // MPICH's encoding (its mpir_status.h): the count in bytes, low 32 bits
  // in count_lo, the rest shifted above the cancelled bit. The same as
  // MPI_Status_set_elements_x(status, MPI_BYTE, bytes) and
  // MPI_Status_set_cancelled(status, 0), without taking MPI's lock twice on
  // every call (the layer's tests check the two agree).
  const auto count = static_cast<std::uint64_t>(bytes);
  status->count_lo = static_cast<int>(count & 0xFFFFFFFFu);
  status->count_hi_and_cancelled = static_cast<int>((count >> 32) << 1);
#else
  MPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(bytes));
  MPI_Status_set_cancelled(status, 0);
#endif
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = MPI_SUCCESS;
}

int start_request(Future<std::size_t> operation, LayerFile& file, MPI_File handle,
                  MPI_Request* request) {
  auto* outcome = new Outcome();
  const int started = MPI_Grequest_start(query, release, cancel, outcome, request);
  if (started != MPI_SUCCESS) {
    delete outcome;
    operation.wait();
    return started;
  }
  const MPI_Request completing = *request;
  const MPI_Errhandler handler = file.errhandler;
  // The continuation runs on the thread that completes the operation; it
  // must not touch the LayerFile, which may be closed by then.
  operation.then([outcome, completing, handler, handle](Future<std::size_t> done) {
    try {
      outcome->bytes = done.get();
    } catch (...) {
      outcome->error = error_code_of(std::current_exception());
      report(handler, handle, outcome->error);
    }
    MPI_Request to_complete = completing;
    MPI_Grequest_complete(to_complete);
  });
  return MPI_SUCCESS;
}

}  // namespace flowio::mpiio
