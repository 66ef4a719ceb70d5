// Simulation: a small 3-D heat diffusion on a block-distributed n x n x n
// global grid, with five variables per cell: temperature, pressure (ideal
// gas) and the three components of a velocity that follows the
// temperature gradient. Ranks sit on a 3-D Cartesian process grid and
// exchange one ghost layer of temperature with their neighbours.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint_buffer.h"
#include "mpi_datatype.h"

namespace insitu {

inline constexpr int kVariables = 5;  // temperature, pressure, velocity x, y, z

// How the global grid is cut among the ranks.
enum class Decomposition {
  // Along x only, the slowest dimension of the file's C order: a rank's
  // part of each variable is one contiguous run of the file.
  slabs,
  // The process grid MPI_Dims_create gives: on 4 ranks (2x2x1) a rank's
  // part of a variable is many short runs.
  blocks,
};

// The constructor, reset() and step() are collective over MPI_COMM_WORLD
// (they exchange halos); one thread per rank calls.
class Simulation {
 public:
  Simulation(int global_size, Decomposition decomposition);
  ~Simulation() { MPI_Comm_free(&grid_comm_); }
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Back to the initial state: a warm, off-centre blob in ambient air.
  void reset();
  // Advances one step: `sweeps` explicit diffusion sweeps, calling `poll`
  // after each, then the derived variables.
  void step(std::int64_t sweeps, const std::function<void()>& poll);
  // Copies the state into `checkpoint`: variable after variable, each
  // block in C order; `checkpoint` holds checkpoint_values().
  void save(CheckpointBuffer& checkpoint) const;

  std::int64_t block_cells() const { return std::int64_t{local_[0]} * local_[1] * local_[2]; }
  std::int64_t checkpoint_values() const { return kVariables * block_cells(); }
  // This rank's block within the global array: the file view's filetype.
  MPI_Datatype block_in_file() const { return block_in_file_.get(); }
  const int* process_grid() const { return process_grid_; }

 private:
  std::size_t at(int i, int j, int k) const {  // ghosted coordinates, 0 .. local + 1
    return (static_cast<std::size_t>(i) * (local_[1] + 2) + j) * (local_[2] + 2) + k;
  }
  void exchange_halos();
  void derive();

  int global_size_;
  int process_grid_[3] = {0, 0, 0};
  int local_[3] = {0, 0, 0};
  int start_[3] = {0, 0, 0};
  int low_neighbour_[3] = {0, 0, 0}, high_neighbour_[3] = {0, 0, 0};
  MPI_Comm grid_comm_ = MPI_COMM_NULL;
  MpiDatatype block_in_file_;
  // Faces of the ghosted block, per dimension: the first and last interior
  // layers (sent) and the ghost layers below and above (received).
  MpiDatatype send_low_[3], send_high_[3], receive_low_[3], receive_high_[3];
  std::vector<double> temperature_, next_temperature_;  // ghosted
  std::vector<double> pressure_, velocity_[3];          // block only, C order
};

}  // namespace insitu
