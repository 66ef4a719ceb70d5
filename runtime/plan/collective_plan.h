// CollectivePlan: what compiling a collective call produces on this process
// (runtime/plan_compiler.h), everything that depends on the processes'
// accesses and not on their buffers: the realms, the clients this
// aggregator serves and their accesses, each client message, each window
// with its pieces, and the Alltoallw rounds. Immutable once compiled and
// shared, so that a later call with the same accesses on every process
// (a time step repeating its write) reruns it on new buffers without realm
// calc or metadata transfer (runtime/plan_cache.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/core/access.h"
#include "runtime/core/realm_layout.h"

namespace flowio::runtime {

// One message between this process, as a client, and an aggregator: its
// data for (write) or from (read) one window.
struct ClientItemPlan {
  int peer = 0;             // the aggregator's rank
  std::int64_t window = 0;  // the window's index, in the message tag
  std::int64_t from = 0;    // position in this process's data stream
  std::int64_t bytes = 0;
};

// One file piece of a window, and where its bytes lie in the window's
// buffer.
struct WindowPiecePlan {
  std::int64_t offset = 0;
  std::int64_t length = 0;
  std::int64_t at = 0;  // in the window buffer
};

// One window of this aggregator's realm: the clients' parts laid out one
// after another in its buffer, and its pieces in file order.
struct WindowPlan {
  core::Window window;
  struct Part {
    std::size_t client = 0;  // index into CollectivePlan::clients
    std::int64_t from = 0;   // position in the client's data stream
    std::int64_t bytes = 0;
    std::int64_t at = 0;  // in the window buffer
  };
  std::vector<Part> parts;
  std::int64_t total = 0;
  std::vector<WindowPiecePlan> pieces;
};

// This process's part of one round of the Alltoallw exchange. Round k
// moves the data of every slot's window of index k (core::Window::index,
// which every process gives a window alike); every process takes part in
// every round that has data anywhere (CollectivePlan::live_rounds), as a
// client (its shares of the round's windows) and as an aggregator (its
// own window of the round, if it has data).
struct RoundPlan {
  struct Share {
    int peer = 0;
    std::int64_t from = 0;  // position in this process's data stream
    std::int64_t bytes = 0;
  };
  std::int64_t index = 0;
  std::vector<Share> shares;          // client side, by slot
  std::int64_t share_bytes = 0;       // their sum
  std::optional<std::size_t> window;  // index into CollectivePlan::windows
};

struct CollectiveClient {
  int rank = 0;
  core::Access access;
};

struct CollectivePlan {
  // False: every process accesses the file itself (direct mode); nothing
  // below is set.
  bool two_phase = false;
  std::optional<core::RealmLayout> layout;
  int slot = -1;  // this process's aggregator slot, or -1
  std::vector<CollectiveClient> clients;
  std::vector<ClientItemPlan> client_items;
  std::vector<WindowPlan> windows;
  // The Alltoallw exchange (hint flowio_exchange) instead of messages:
  // client_items is empty; windows are this aggregator's windows with
  // data, each in its round.
  bool alltoallw = false;
  // The rounds where this process has a part, by index; and the rounds
  // with data anywhere, by index, agreed by every process after the plan
  // check (plan_check_stage): rounds, not windows of the layout, so that
  // a sparse access far across the file costs nothing between its data.
  std::vector<RoundPlan> rounds;
  std::vector<std::int64_t> live_rounds;
  // Counts and displacements of nothing, one per process: a round where
  // this process has no part, or whose buffers could not be made (every
  // process takes part in every live round).
  std::vector<MPI_Count> no_counts;
  std::vector<MPI_Aint> no_displacements;
  // Set once every process made its part of the plan (the plan check,
  // plan_check.h), on every process alike: a plan whose compiling failed
  // anywhere is never complete, and an operation that would rerun it
  // fails on every process.
  bool complete = false;

  // Bytes the plan holds, for the cache's bound.
  std::int64_t footprint() const;
};

}  // namespace flowio::runtime
