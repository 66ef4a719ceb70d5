#include "exchange/point_to_point.h"

#include <climits>

#include "exchange/compress.h"
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

// The frame's header and its payload as one datatype: two blocks of
// bytes at their addresses.
MPI_Datatype framed_type(const void* header, const void* payload, std::int64_t bytes) {
  MPI_Aint addresses[2];
  check_mpi(MPI_Get_address(header, &addresses[0]), "MPI_Get_address");
  check_mpi(MPI_Get_address(payload, &addresses[1]), "MPI_Get_address");
  const int lengths[2] = {static_cast<int>(kFrameHeaderBytes), message_count(bytes)};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_hindexed(2, lengths, addresses, MPI_BYTE, &type),
            "MPI_Type_create_hindexed");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}

}  // namespace

MPI_Request post_framed_send(MPI_Comm comm, const std::byte* header, const void* payload,
                             std::int64_t bytes, int peer, int tag) {
  MPI_Datatype type = framed_type(header, payload, bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = MPI_Isend(MPI_BOTTOM, 1, type, peer, tag, comm, &request);
  // Freeing a datatype a pending request uses is allowed: MPI keeps it
  // until the request completes.
  MPI_Type_free(&type);
  check_mpi(code, "MPI_Isend");
  return request;
}

MPI_Request post_framed_receive(MPI_Comm comm, std::byte* header, void* payload, std::int64_t bytes,
                                int peer, int tag) {
  MPI_Datatype type = framed_type(header, payload, bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = MPI_Irecv(MPI_BOTTOM, 1, type, peer, tag, comm, &request);
  MPI_Type_free(&type);
  check_mpi(code, "MPI_Irecv");
  return request;
}

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
