// The Alltoallw exchange of a collective operation's data: one
// MPI_Ialltoallw per round, in which every process sends its shares of the
// round's windows to their aggregators and every aggregator receives its
// window (writes), or the other way round (reads). Rounds are collective
// calls: every process posts them in the same order.
#pragma once

#include <mpi.h>

#include <span>

namespace flowio::exchange {

// The counts and displacements of one round, by rank, for the clients'
// side (shares) and the aggregators' side (windows), in bytes: 64-bit
// (MPI_Ialltoallw_c), since a client's shares add up past 2^31 with
// enough aggregators.
struct RoundLayout {
  std::span<const MPI_Count> client_counts;
  std::span<const MPI_Aint> client_displacements;
  std::span<const MPI_Count> window_counts;
  std::span<const MPI_Aint> window_displacements;
};

// Posts one round. `client_data` holds this process's shares one after
// another (or null: none), `window_data` its window (or null). `byte_types` holds
// MPI_BYTE once per rank; it, the counts and both buffers must stay
// untouched until the request completes.
MPI_Request post_round(MPI_Comm comm, bool writing, char* client_data, char* window_data,
                       const RoundLayout& layout, std::span<const MPI_Datatype> byte_types);

}  // namespace flowio::exchange
