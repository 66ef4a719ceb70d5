#include "simulation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "flowio/flowio.h"

namespace insitu {
namespace {

using flowio::check_mpi;

constexpr double kAmbient = 300.0;                   // K, held at the domain's boundary
constexpr double kDiffusion = 0.15;                  // alpha dt / dx^2; stable below 1/6
constexpr double kDensityGasConstant = 1.2 * 287.0;  // rho R of air, Pa / K
constexpr double kBuoyancy = 0.05;                   // velocity per K of gradient

}  // namespace

Simulation::Simulation(int global_size, Decomposition decomposition) : global_size_(global_size) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (decomposition == Decomposition::slabs) {
    process_grid_[0] = ranks;
    process_grid_[1] = process_grid_[2] = 1;
  }
  check_mpi(MPI_Dims_create(ranks, 3, process_grid_), "MPI_Dims_create");
  const int periodic[3] = {0, 0, 0};
  check_mpi(MPI_Cart_create(MPI_COMM_WORLD, 3, process_grid_, periodic, 0, &grid_comm_),
            "MPI_Cart_create");
  int rank = 0, coordinates[3] = {0, 0, 0};
  MPI_Comm_rank(grid_comm_, &rank);
  check_mpi(MPI_Cart_coords(grid_comm_, rank, 3, coordinates), "MPI_Cart_coords");
  for (int d = 0; d < 3; ++d) {
    if (global_size < process_grid_[d]) {
      throw std::invalid_argument("the global grid is smaller than the process grid");
    }
    // Blocks as even as possible: the first (n mod p) ranks get one more.
    const int base = global_size / process_grid_[d], extra = global_size % process_grid_[d];
    local_[d] = base + (coordinates[d] < extra ? 1 : 0);
    start_[d] = coordinates[d] * base + std::min(coordinates[d], extra);
    check_mpi(MPI_Cart_shift(grid_comm_, d, 1, &low_neighbour_[d], &high_neighbour_[d]),
              "MPI_Cart_shift");
  }
  const int global[3] = {global_size, global_size, global_size};
  block_in_file_ = subarray(global, local_, start_);
  const int ghosted[3] = {local_[0] + 2, local_[1] + 2, local_[2] + 2};
  for (int d = 0; d < 3; ++d) {
    int face[3] = {local_[0], local_[1], local_[2]};
    face[d] = 1;
    int starts[3] = {1, 1, 1};
    send_low_[d] = subarray(ghosted, face, starts);
    starts[d] = local_[d];
    send_high_[d] = subarray(ghosted, face, starts);
    starts[d] = 0;
    receive_low_[d] = subarray(ghosted, face, starts);
    starts[d] = local_[d] + 1;
    receive_high_[d] = subarray(ghosted, face, starts);
  }
  const std::size_t ghosted_cells = static_cast<std::size_t>(ghosted[0]) * ghosted[1] * ghosted[2];
  temperature_.resize(ghosted_cells);
  next_temperature_.resize(ghosted_cells);
  pressure_.resize(static_cast<std::size_t>(block_cells()));
  for (auto& component : velocity_) component.resize(pressure_.size());
}

void Simulation::reset() {
  // Ghost layers on the domain's boundary keep the ambient value for good:
  // no sweep writes them and no neighbour sends to them.
  std::fill(temperature_.begin(), temperature_.end(), kAmbient);
  std::fill(next_temperature_.begin(), next_temperature_.end(), kAmbient);
  const double n = global_size_, width = n / 10;
  const double centre[3] = {0.4 * n, 0.55 * n, 0.5 * n};
  for (int i = 1; i <= local_[0]; ++i) {
    for (int j = 1; j <= local_[1]; ++j) {
      for (int k = 1; k <= local_[2]; ++k) {
        const double dx = start_[0] + i - 1 - centre[0], dy = start_[1] + j - 1 - centre[1],
                     dz = start_[2] + k - 1 - centre[2];
        temperature_[at(i, j, k)] =
            kAmbient + 100.0 * std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * width * width));
      }
    }
  }
  exchange_halos();
  derive();
}

void Simulation::exchange_halos() {
  // All six faces at once, so that a sweep waits for its neighbours once.
  MPI_Request requests[12];
  int used = 0;
  for (int d = 0; d < 3; ++d) {
    check_mpi(MPI_Irecv(temperature_.data(), 1, receive_low_[d].get(), low_neighbour_[d], 2 * d,
                        grid_comm_, &requests[used++]),
              "MPI_Irecv");
    check_mpi(MPI_Irecv(temperature_.data(), 1, receive_high_[d].get(), high_neighbour_[d],
                        2 * d + 1, grid_comm_, &requests[used++]),
              "MPI_Irecv");
  }
  for (int d = 0; d < 3; ++d) {
    check_mpi(MPI_Isend(temperature_.data(), 1, send_high_[d].get(), high_neighbour_[d], 2 * d,
                        grid_comm_, &requests[used++]),
              "MPI_Isend");
    check_mpi(MPI_Isend(temperature_.data(), 1, send_low_[d].get(), low_neighbour_[d], 2 * d + 1,
                        grid_comm_, &requests[used++]),
              "MPI_Isend");
  }
  check_mpi(MPI_Waitall(used, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void Simulation::step(std::int64_t sweeps, const std::function<void()>& poll) {
  const std::size_t stride_i = at(1, 0, 0) - at(0, 0, 0), stride_j = at(0, 1, 0) - at(0, 0, 0);
  for (std::int64_t sweep = 0; sweep < sweeps; ++sweep) {
    exchange_halos();
    const double* t = temperature_.data();
    double* next = next_temperature_.data();
    for (int i = 1; i <= local_[0]; ++i) {
      for (int j = 1; j <= local_[1]; ++j) {
        for (int k = 1; k <= local_[2]; ++k) {
          const std::size_t c = at(i, j, k);
          const double neighbours = t[c - stride_i] + t[c + stride_i] + t[c - stride_j] +
                                    t[c + stride_j] + t[c - 1] + t[c + 1];
          next[c] = t[c] + kDiffusion * (neighbours - 6 * t[c]);
        }
      }
    }
    temperature_.swap(next_temperature_);
    poll();
  }
  exchange_halos();
  derive();
}

void Simulation::derive() {
  const std::size_t stride_i = at(1, 0, 0) - at(0, 0, 0), stride_j = at(0, 1, 0) - at(0, 0, 0);
  const double* t = temperature_.data();
  std::size_t cell = 0;
  for (int i = 1; i <= local_[0]; ++i) {
    for (int j = 1; j <= local_[1]; ++j) {
      for (int k = 1; k <= local_[2]; ++k, ++cell) {
        const std::size_t c = at(i, j, k);
        pressure_[cell] = kDensityGasConstant * t[c];
        // Air moves from warm to cold: down the temperature gradient.
        velocity_[0][cell] = -kBuoyancy * (t[c + stride_i] - t[c - stride_i]) / 2;
        velocity_[1][cell] = -kBuoyancy * (t[c + stride_j] - t[c - stride_j]) / 2;
        velocity_[2][cell] = -kBuoyancy * (t[c + 1] - t[c - 1]) / 2;
      }
    }
  }
}

void Simulation::save(CheckpointBuffer& checkpoint) const {
  double* out = checkpoint.data();
  for (int i = 1; i <= local_[0]; ++i) {
    for (int j = 1; j <= local_[1]; ++j) {
      out = std::copy_n(temperature_.data() + at(i, j, 1), local_[2], out);
    }
  }
  for (const auto* variable : {&pressure_, &velocity_[0], &velocity_[1], &velocity_[2]}) {
    out = std::copy(variable->begin(), variable->end(), out);
  }
}

}  // namespace insitu
