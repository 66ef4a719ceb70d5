#include "exchange/alltoallw.h"

#include "flowio/error.h"

namespace flowio::exchange {
namespace {

// Where a process with nothing to send or receive points MPI: two null
// buffers are aliased, which MPI refuses (MPI_ERR_BUFFER), and a process
// that does not post a round leaves its partners' rounds matched with its
// next one. Never read or written (every count is 0).
char nothing_to_send;
char nothing_to_receive;

}  // namespace

MPI_Request post_round(MPI_Comm comm, bool writing, char* client_data, char* window_data,
                       const RoundLayout& layout, std::span<const MPI_Datatype> byte_types) {
  // Writes: clients send their shares, aggregators receive windows.
  // Reads: the other way round.
  char* send = writing ? client_data : window_data;
  char* receive = writing ? window_data : client_data;
  if (send == nullptr) send = &nothing_to_send;
  if (receive == nullptr) receive = &nothing_to_receive;
  const std::span<const MPI_Count> send_counts =
      writing ? layout.client_counts : layout.window_counts;
  const std::span<const MPI_Aint> send_displacements =
      writing ? layout.client_displacements : layout.window_displacements;
  const std::span<const MPI_Count> receive_counts =
      writing ? layout.window_counts : layout.client_counts;
  const std::span<const MPI_Aint> receive_displacements =
      writing ? layout.window_displacements : layout.client_displacements;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ialltoallw_c(send, send_counts.data(), send_displacements.data(), byte_types.data(),
                             receive, receive_counts.data(), receive_displacements.data(),
                             byte_types.data(), comm, &request),
            "MPI_Ialltoallw_c");
  return request;
}

}  // namespace flowio::exchange
