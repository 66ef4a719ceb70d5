#include "exchange/point_to_point.h"

#include <climits>

#include "flowio/error.h"

namespace flowio::exchange {
namespace {

int message_count(std::int64_t bytes) {
  if (bytes > INT_MAX) {
    throw UsageError(ErrorCode::invalid_argument,
                     "collective exchange: a message of " + std::to_string(bytes) +
                         " bytes (cb_buffer_size must stay below 2 GiB)");
  }
  return static_cast<int>(bytes);
}

}  // namespace

MPI_Request post_client_message(MPI_Comm comm, bool writing, char* data, std::int64_t bytes,
                                int aggregator, int tag) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (writing) {
    check_mpi(MPI_Isend(data, message_count(bytes), MPI_BYTE, aggregator, tag, comm, &request),
              "MPI_Isend");
  } else {
    check_mpi(MPI_Irecv(data, message_count(bytes), MPI_BYTE, aggregator, tag, comm, &request),
              "MPI_Irecv");
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
      check_mpi(
          MPI_Irecv(data, message_count(part.bytes), MPI_BYTE, part.client, tag, comm, &request),
          "MPI_Irecv");
    } else {
      check_mpi(
          MPI_Isend(data, message_count(part.bytes), MPI_BYTE, part.client, tag, comm, &request),
          "MPI_Isend");
    }
    requests.push_back(request);
  }
}

}  // namespace flowio::exchange
