// The point-to-point exchange of a collective operation's data: for each
// window, one message between each client with data in it and the
// window's aggregator, posted nonblocking (the aggregator posts all its
// window's receives, or sends, at once; each client its message) and
// completed as they arrive.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace flowio::exchange {

// A client's message for one window: a send of `bytes` bytes at `data`
// (writes) or a receive into it (reads).
MPI_Request post_client_message(MPI_Comm comm, bool writing, char* data, std::int64_t bytes,
                                int aggregator, int tag);

// One client's part of an aggregator's window buffer.
struct WindowMessage {
  int client = 0;          // its rank
  std::int64_t at = 0;     // in the window buffer
  std::int64_t bytes = 0;  // to receive (writes) or send (reads)
};

// An aggregator's messages for one window: a receive per client part
// (writes) or a send (reads), appended to `requests`.
void post_window_messages(MPI_Comm comm, bool writing, char* buffer,
                          std::span<const WindowMessage> parts, int tag,
                          std::vector<MPI_Request>& requests);

// Framed messages (compress_stage.h): a frame's header and its payload,
// each where it lies, as two messages with the same tag, the header
// first (MPI keeps their order): each contiguous, so that neither side
// copies the payload through a datatype. A send sends the
// kFrameHeaderBytes at `header`, then `bytes` bytes at `payload`; a
// receive takes the header into `header` and at most `bytes` bytes into
// `payload` (MPI_Get_count of the second request tells how many came).
// Both buffers are borrowed until the requests, appended to `requests`,
// complete.
void post_framed_send(MPI_Comm comm, const std::byte* header, const void* payload,
                      std::int64_t bytes, int peer, int tag, std::vector<MPI_Request>& requests);
void post_framed_receive(MPI_Comm comm, std::byte* header, void* payload, std::int64_t bytes,
                         int peer, int tag, std::vector<MPI_Request>& requests);

}  // namespace flowio::exchange
