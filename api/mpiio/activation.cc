#include "api/mpiio/activation.h"

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "api/layer_hooks.h"

namespace flowio::mpiio {
namespace {

enum class Route { undecided, serve, forward };

std::atomic<Route> route{Route::undecided};
std::atomic<int> reported_level{-1};
std::atomic<long> served_calls{0};
std::atomic<long> forwarded_calls{0};
std::mutex decision_mutex;

// Called with decision_mutex held.
void decide(int provided) {
  if (route.load() != Route::undecided) return;
  if (switched_off()) {
    route = Route::forward;
    return;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::fprintf(stderr,
                   "flowio-mpiio: MPI does not provide MPI_THREAD_MULTIPLE, which flowio "
                   "needs; MPI_File_* calls go to the MPI library's own MPI-IO\n");
    }
    route = Route::forward;
    return;
  }
  route = Route::serve;
}

Route current_route() {
  Route now = route.load(std::memory_order_acquire);
  if (now != Route::undecided) return now;
  std::lock_guard lock(decision_mutex);
  int provided = MPI_THREAD_SINGLE;
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (initialized) PMPI_Query_thread(&provided);
  decide(provided);
  return route.load();
}

}  // namespace

bool switched_off() {
  const char* setting = std::getenv("FLOWIO_MPIIO");
  return setting != nullptr && std::strcmp(setting, "off") == 0;
}

void note_initialized(int asked, int provided) {
  reported_level = asked < provided ? asked : provided;
  std::lock_guard lock(decision_mutex);
  decide(provided);
}

int program_thread_level() { return reported_level.load(); }

// Counting costs an atomic read-modify-write on a shared line in every
// call; only a report needs it.
bool reporting() {
  static const bool wanted = [] {
    const char* setting = std::getenv("FLOWIO_MPIIO_REPORT");
    return setting != nullptr && std::strcmp(setting, "1") == 0;
  }();
  return wanted;
}

bool forwarding() {
  const bool forward = current_route() == Route::forward;
  if (reporting())
    (forward ? forwarded_calls : served_calls).fetch_add(1, std::memory_order_relaxed);
  return forward;
}

void report_at_finalize(long kept_datatypes) {
  if (!reporting()) return;
  const flowio::LayerHooks::WriteBehindCounts behind = flowio::LayerHooks::write_behind_counts();
  std::fprintf(stderr,
               "flowio-mpiio: served %ld file calls, forwarded %ld, datatypes kept %ld, "
               "writes behind %ld (without a copy %ld, waited for room %ld)\n",
               served_calls.load(), forwarded_calls.load(), kept_datatypes, behind.writes_behind,
               behind.without_copy, behind.waits_for_room);
}

}  // namespace flowio::mpiio
