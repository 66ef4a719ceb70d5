// The point-to-point exchange of a collective operation's data: for each
// window, one message between each client with data in it and the
// window's aggregator, posted nonblocking (the aggregator posts all its
// window's receives, or sends, at once; each client its message) and
// completed as they arrive.
#pragma once

#include <mpi.h>

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

}  // namespace flowio::exchange
