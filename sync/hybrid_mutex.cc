#include "sync/hybrid_mutex.h"

#include "flowio/error.h"

namespace flowio::sync {
namespace {

constexpr int kHandOffTag = 1;

}  // namespace

HybridMutex::HybridMutex(MPI_Comm comm, ProgressPort& progress, int home)
    : WaitlistMutex(comm, progress, home) {}

// The sender is not known in advance (whoever releases before this
// process's turn), hence MPI_ANY_SOURCE, as in the paper. A hand-off that
// arrives before the receive is posted waits in MPI's queue.
void HybridMutex::await_hand_off(Done granted) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int code =
      MPI_Irecv(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, kHandOffTag, channel().comm(), &request);
  if (code != MPI_SUCCESS) {
    granted(std::make_exception_ptr(MpiError("lock: MPI_Irecv of the hand-off", code)));
    return;
  }
  channel().watch({request}, [granted = std::move(granted)](int received) {
    granted(mpi_failure(received, "lock: hand-off"));
  });
}

MPI_Request HybridMutex::hand_off(int next) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, next, kHandOffTag, channel().comm(), &request),
            "unlock: MPI_Isend of the hand-off");
  return request;
}

}  // namespace flowio::sync
