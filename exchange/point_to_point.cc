#include "exchange/point_to_point.h"

#include "exchange/compress.h"
#include "flowio/error.h"

namespace flowio::exchange {

// Messages go through the large-count calls (MPI_Isend_c, MPI_Irecv_c):
// a message is as long as a window or a client's share of it, whatever
// its size.

void post_framed_send(MPI_Comm comm, const std::byte* header, const void* payload,
                      std::int64_t bytes, int peer, int tag, std::vector<MPI_Request>& requests) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend_c(header, static_cast<MPI_Count>(kFrameHeaderBytes), MPI_BYTE, peer, tag,
                        comm, &request),
            "MPI_Isend_c");
  requests.push_back(request);
  check_mpi(MPI_Isend_c(payload, bytes, MPI_BYTE, peer, tag, comm, &request), "MPI_Isend_c");
  requests.push_back(request);
}

void post_framed_receive(MPI_Comm comm, std::byte* header, void* payload, std::int64_t bytes,
                         int peer, int tag, std::vector<MPI_Request>& requests) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv_c(header, static_cast<MPI_Count>(kFrameHeaderBytes), MPI_BYTE, peer, tag,
                        comm, &request),
            "MPI_Irecv_c");
  requests.push_back(request);
  check_mpi(MPI_Irecv_c(payload, bytes, MPI_BYTE, peer, tag, comm, &request), "MPI_Irecv_c");
  requests.push_back(request);
}

MPI_Request post_client_message(MPI_Comm comm, bool writing, char* data, std::int64_t bytes,
                                int aggregator, int tag) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (writing) {
    check_mpi(MPI_Isend_c(data, bytes, MPI_BYTE, aggregator, tag, comm, &request), "MPI_Isend_c");
  } else {
    check_mpi(MPI_Irecv_c(data, bytes, MPI_BYTE, aggregator, tag, comm, &request), "MPI_Irecv_c");
  }
  return request;
}

void post_window_messages(MPI_Comm comm, bool writing, char* buffer,
                          std::span<const WindowMessage> parts, int tag,
                          std::vector<MPI_Request>& requests) {
  for (const WindowMessage& part : parts) {
    MPI_Request request;
    char* data = buffer + part.at;
    if (writing) {
      check_mpi(MPI_Irecv_c(data, part.bytes, MPI_BYTE, part.client, tag, comm, &request),
                "MPI_Irecv_c");
    } else {
      check_mpi(MPI_Isend_c(data, part.bytes, MPI_BYTE, part.client, tag, comm, &request),
                "MPI_Isend_c");
    }
    requests.push_back(request);
  }
}

}  // namespace flowio::exchange
