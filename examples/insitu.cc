// The README's main job: in-situ checkpointing. A small 3-D heat diffusion
// simulation runs on a block-distributed global grid (ranks on the 3-D
// process grid MPI_Dims_create gives, halos exchanged with neighbours),
// with five variables per cell: temperature, pressure (ideal gas) and the
// three components of a velocity that follows the temperature gradient.
// Step k copies the state into a checkpoint buffer, starts writing it with
// File::iwrite_at_all, computes step k + 1 while the write proceeds, then
// waits (Future::get()). After the steps, an analysis pass reads every
// checkpoint back with read_at_all, checks it bit for bit against the
// checksum taken when it was written, and prints the mean and peak
// temperature of each step.
//
// Checkpoints are durable by default (--durable=1): a checkpoint counts as
// taken once it is on storage, not in the page cache. flowio opens its file
// with the hint flowio_durable=enable, which makes the sync part of the
// nonblocking write, so it overlaps the next step; MPICH's MPI-IO has no
// nonblocking sync, so its loop calls MPI_File_sync after MPI_Wait. Why
// that default: overlap needs a resource the computation leaves free.
// Writing into the page cache is copying, done by the same cores the
// simulation computes on (4 ranks on 2 cores here leave none), so it cannot
// hide; a durable write spends most of its time waiting for the device,
// which can. --durable=0 measures page-cache writes.
//
// File layout: one file per implementation, checkpoint k at byte
// k * checkpoint_bytes. Inside a checkpoint each variable is the whole
// global array of doubles in C order (x slowest), one variable after
// another. A rank's view is its block (MPI_Type_create_subarray over the
// global array), which tiles once per variable; its memory is contiguous,
// variable after variable. On 4 ranks (2x2x1) a rank's part of a variable
// is many short runs, so flowio chooses two-phase I/O; on 2 ranks (2x1x1)
// it is one long run, and each rank writes its part itself.
//
// The same steps run again, from the same initial state, with MPICH's
// MPI-IO (MPI_File_iwrite_at_all_c, then MPI_Wait, then MPI_File_sync) on a
// second file. MPICH advances nonblocking I/O only inside MPI calls, so its
// loop also calls MPI_Test after every stencil sweep (the halo exchanges
// call MPI too). Printed side by side, each time that of the slowest rank:
//   t_io       one blocking (durable) checkpoint write (median of 3);
//   t_compute  one simulation step alone, without I/O (median of 3);
//   t_total    one step of the loop: start the write, compute, wait
//              (median over the steps);
//   added      t_total - t_compute: what a checkpoint costs the simulation
//              per step (0 when it hides entirely);
//   overlap  = (t_io + t_compute - t_total) / min(t_io, t_compute):
//              1 when the write hides entirely, 0 when nothing overlaps,
//              negative when writing in the background slows the step more
//              than writing before it would (above 1 only by the noise of
//              the separate measurements: the step took less than the
//              longer of the two alone);
// then the statistics of flowio's last checkpoint write
// (File::statistics().back()) on rank 0. A step is as many stencil sweeps
// as take about as long as flowio's t_io, unless --sweeps says. The
// analysis also reads both files with MPICH, which checks where flowio put
// the bytes, not only that its write and read agree.
//
// Usage: mpiexec -n 4 bazel-bin/examples/insitu [--mib=64] [--steps=5]
//   [--sweeps=0 (0: automatic)] [--durable=1] [--dir=$TMPDIR, else /tmp]
//   [--trace=insitu_trace.json]
// --mib sets the checkpoint size (the global grid is the cube that comes
// closest). Unless FLOWIO_TRACE is set already, flowio writes a Perfetto /
// Chrome trace of its collective operations to --trace. The data files are
// removed at the end; the trace stays. Exit code: 0 when every checkpoint
// reads back bit-exact, 1 when one does not or an error occurs, 2 for bad
// options.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flowio/flowio.h"

namespace {

using flowio::check_mpi;

constexpr int kVariables = 5;                        // temperature, pressure, velocity x, y, z
constexpr double kAmbient = 300.0;                   // K, held at the domain's boundary
constexpr double kDiffusion = 0.15;                  // alpha dt / dx^2; stable below 1/6
constexpr double kDensityGasConstant = 1.2 * 287.0;  // rho R of air, Pa / K
constexpr double kBuoyancy = 0.05;                   // velocity per K of gradient

struct Options {
  std::int64_t mib = 64;
  std::int64_t steps = 5;
  std::int64_t sweeps = 0;
  bool durable = true;
  std::string dir;
  std::string trace = "insitu_trace.json";
};

std::int64_t integer_at_least(const std::string& key, const std::string& text,
                              std::int64_t minimum) {
  std::size_t used = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < minimum) {
    throw std::invalid_argument("--" + key + " needs an integer of at least " +
                                std::to_string(minimum) + ", not '" + text + "'");
  }
  return value;
}

// Reads --key=value arguments; throws std::invalid_argument for anything
// else, so that a misspelt option is an error rather than ignored.
Options parse_options(int argc, char** argv) {
  Options options;
  const char* tmpdir = std::getenv("TMPDIR");
  options.dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const std::size_t equals = argument.find('=');
    if (argument.rfind("--", 0) != 0 || equals == std::string::npos) {
      throw std::invalid_argument("expected --key=value, not '" + argument + "'");
    }
    const std::string key = argument.substr(2, equals - 2), value = argument.substr(equals + 1);
    if (key == "mib") {
      options.mib = integer_at_least(key, value, 1);
    } else if (key == "steps") {
      options.steps = integer_at_least(key, value, 1);
    } else if (key == "sweeps") {
      options.sweeps = integer_at_least(key, value, 0);
    } else if (key == "durable" && (value == "0" || value == "1")) {
      options.durable = value == "1";
    } else if (key == "dir" && !value.empty()) {
      options.dir = value;
    } else if (key == "trace" && !value.empty()) {
      options.trace = value;
    } else {
      throw std::invalid_argument("unknown option '" + argument + "'");
    }
  }
  return options;
}

// An MPI datatype, committed at construction and freed with the handle.
class Datatype {
 public:
  Datatype() = default;
  explicit Datatype(MPI_Datatype uncommitted) : type_(uncommitted) {
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  Datatype(Datatype&& other) noexcept : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  Datatype& operator=(Datatype&& other) noexcept {
    if (this != &other) {
      free();
      type_ = std::exchange(other.type_, MPI_DATATYPE_NULL);
    }
    return *this;
  }
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
  ~Datatype() { free(); }
  MPI_Datatype get() const { return type_; }

 private:
  void free() noexcept {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A C-order subarray of doubles.
Datatype subarray(const int sizes[3], const int subsizes[3], const int starts[3]) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type),
            "MPI_Type_create_subarray");
  return Datatype(type);
}

// The simulation: this rank's block of an n x n x n global grid, with one
// ghost layer for the temperature. The constructor, reset() and step() are
// collective over MPI_COMM_WORLD (they exchange halos); one thread calls.
class Simulation {
 public:
  explicit Simulation(int global_size);
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
  void save(std::vector<double>& checkpoint) const;

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
  Datatype block_in_file_;
  // Faces of the ghosted block, per dimension: the first and last interior
  // layers (sent) and the ghost layers below and above (received).
  Datatype send_low_[3], send_high_[3], receive_low_[3], receive_high_[3];
  std::vector<double> temperature_, next_temperature_;  // ghosted
  std::vector<double> pressure_, velocity_[3];          // block only, C order
};

Simulation::Simulation(int global_size) : global_size_(global_size) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
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

void Simulation::save(std::vector<double>& checkpoint) const {
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

// FNV-1a over 64-bit words. Each word's step is a bijection of the running
// hash, so a single changed word always changes the result; several
// changes (a misplaced block) go unnoticed with probability about 2^-64.
std::uint64_t checksum(const std::vector<double>& values) {
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (double value : values) hash = (hash ^ std::bit_cast<std::uint64_t>(value)) * 0x100000001b3u;
  return hash;
}

double max_over_ranks(double value) {
  double result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce");
  return result;
}

// Seconds of `operation` on the slowest rank, from a common start.
double time_collective(const std::function<void()>& operation) {
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double start = MPI_Wtime();
  operation();
  return max_over_ranks(MPI_Wtime() - start);
}

// An MPICH MPI-IO file on MPI_COMM_WORLD, closed (collectively) with the
// handle.
class MpichFile {
 public:
  MpichFile(const std::string& path, int mode) {
    check_mpi(MPI_File_open(MPI_COMM_WORLD, path.c_str(), mode, MPI_INFO_NULL, &file_),
              "MPI_File_open");
  }
  MpichFile(const MpichFile&) = delete;
  MpichFile& operator=(const MpichFile&) = delete;
  ~MpichFile() {
    if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  }
  MPI_File get() const { return file_; }
  void close() { check_mpi(MPI_File_close(&file_), "MPI_File_close"); }

 private:
  MPI_File file_ = MPI_FILE_NULL;
};

// Removes the data files on rank 0 when it goes: declared before the file
// handles, so that they are closed first, on every path out.
class RemovedAtEnd {
 public:
  explicit RemovedAtEnd(std::vector<std::string> paths) : paths_(std::move(paths)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    remove();
  }
  RemovedAtEnd(const RemovedAtEnd&) = delete;
  RemovedAtEnd& operator=(const RemovedAtEnd&) = delete;
  ~RemovedAtEnd() { remove(); }

 private:
  void remove() const {
    if (rank_ != 0) return;
    std::error_code ignored;  // a file never made is fine
    for (const auto& path : paths_) std::filesystem::remove(path, ignored);
  }
  std::vector<std::string> paths_;
  int rank_ = 0;
};

// One implementation's checkpoint writes, for one rank's checkpoint buffer
// at view offset step * checkpoint_values (etypes of the view, each rank
// counting only its own data, so step k starts at byte k *
// checkpoint_bytes). The buffer is borrowed from start() until finish().
struct Writer {
  std::function<void(const std::vector<double>&, std::int64_t step)> write;  // blocking
  std::function<void(const std::vector<double>&, std::int64_t step)> start;
  std::function<void()> poll;    // between sweeps while a write proceeds
  std::function<void()> finish;  // waits; throws unless every byte went
};

// What one implementation's step loop measured; times are the slowest
// rank's.
struct LoopTimes {
  double t_total = 0;                    // median over the steps of start + compute + wait
  double writing = 0;                    // starting writes and waiting for them, all steps
  std::vector<std::uint64_t> checksums;  // this rank's checkpoints, by step
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// The step loop from the initial state: checkpoint step k, compute step
// k + 1 meanwhile, wait.
LoopTimes run_steps(Simulation& simulation, const Writer& writer, std::int64_t steps,
                    std::int64_t sweeps, std::vector<double>& checkpoint) {
  LoopTimes times;
  std::vector<double> step_seconds(static_cast<std::size_t>(steps));
  double writing = 0;
  simulation.reset();
  for (std::int64_t step = 0; step < steps; ++step) {
    simulation.save(checkpoint);
    times.checksums.push_back(checksum(checkpoint));
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const double begin = MPI_Wtime();
    writer.start(checkpoint, step);
    const double started = MPI_Wtime();
    simulation.step(sweeps, writer.poll);
    const double computed = MPI_Wtime();
    writer.finish();
    const double end = MPI_Wtime();
    writing += (started - begin) + (end - computed);
    step_seconds[static_cast<std::size_t>(step)] = end - begin;
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, step_seconds.data(), static_cast<int>(steps), MPI_DOUBLE,
                          MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce");
  times.t_total = median(step_seconds);
  times.writing = max_over_ranks(writing);
  return times;
}

// Counts checkpoints that do not read back as written: `read` fills the
// buffer with step k; one count per bad step on any rank.
std::vector<int> verify(const std::function<void(std::vector<double>&, std::int64_t)>& read,
                        const std::vector<std::uint64_t>& checksums, std::vector<double>& buffer,
                        const std::function<void(const std::vector<double>&)>& inspect) {
  std::vector<int> bad(checksums.size());
  for (std::size_t step = 0; step < checksums.size(); ++step) {
    std::fill(buffer.begin(), buffer.end(), -1.0);
    read(buffer, static_cast<std::int64_t>(step));
    bad[step] = checksum(buffer) != checksums[step] ? 1 : 0;
    if (inspect) inspect(buffer);
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, bad.data(), static_cast<int>(bad.size()), MPI_INT, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
  return bad;
}

// The whole demo; returns whether every check passed.
bool run(const Options& options, const std::string& trace_path) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const double wanted_cells = static_cast<double>(options.mib) * 1048576.0 / (kVariables * 8.0);
  const int global_size = static_cast<int>(std::lround(std::cbrt(wanted_cells)));
  Simulation simulation(global_size);
  const std::int64_t global_cells = std::int64_t{global_size} * global_size * global_size;
  const std::int64_t checkpoint_bytes = kVariables * global_cells * 8;
  const MPI_Count count = simulation.checkpoint_values();
  const std::size_t bytes_per_rank = static_cast<std::size_t>(count) * sizeof(double);
  const auto offset = [count](std::int64_t step) { return step * count; };
  std::vector<double> checkpoint(static_cast<std::size_t>(count));

  int pid = static_cast<int>(getpid());
  check_mpi(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  const std::string stem = options.dir + "/insitu_" + std::to_string(pid);
  const std::string flowio_path = stem + "_flowio.dat", mpich_path = stem + "_mpich.dat";
  const RemovedAtEnd scratch({flowio_path, mpich_path});
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, flowio_path, flowio::Mode::create | flowio::Mode::rdwr,
                         {{"flowio_durable", options.durable ? "enable" : "disable"}});
  file.set_view(0, MPI_DOUBLE, simulation.block_in_file());
  MpichFile mpich(mpich_path, MPI_MODE_CREATE | MPI_MODE_RDWR);
  check_mpi(MPI_File_set_view(mpich.get(), 0, MPI_DOUBLE, simulation.block_in_file(), "native",
                              MPI_INFO_NULL),
            "MPI_File_set_view");

  const auto check_bytes = [bytes_per_rank](const std::string& who, std::size_t bytes) {
    if (bytes != bytes_per_rank) {
      throw std::runtime_error(who + " moved " + std::to_string(bytes) + " bytes, not " +
                               std::to_string(bytes_per_rank));
    }
  };
  flowio::Future<std::size_t> written;
  const Writer flowio_writer{
      [&](const std::vector<double>& data, std::int64_t step) {
        check_bytes("flowio write_at_all",
                    file.write_at_all(offset(step), data.data(), count, MPI_DOUBLE));
      },
      [&](const std::vector<double>& data, std::int64_t step) {
        written = file.iwrite_at_all(offset(step), data.data(), count, MPI_DOUBLE);
      },
      [] {}, [&] { check_bytes("flowio iwrite_at_all", written.get()); }};
  // MPI_Test frees a completed request (leaving MPI_REQUEST_NULL), so the
  // status is kept from whichever call completes it.
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status request_status;
  const auto mpich_bytes = [](const MPI_Status& status) {
    MPI_Count values = 0;
    check_mpi(MPI_Get_count_c(&status, MPI_DOUBLE, &values), "MPI_Get_count_c");
    return static_cast<std::size_t>(values) * sizeof(double);
  };
  const Writer mpich_writer{
      [&](const std::vector<double>& data, std::int64_t step) {
        MPI_Status status;
        check_mpi(MPI_File_write_at_all_c(mpich.get(), offset(step), data.data(), count, MPI_DOUBLE,
                                          &status),
                  "MPI_File_write_at_all_c");
        check_bytes("MPI_File_write_at_all_c", mpich_bytes(status));
        if (options.durable) check_mpi(MPI_File_sync(mpich.get()), "MPI_File_sync");
      },
      [&](const std::vector<double>& data, std::int64_t step) {
        check_mpi(MPI_File_iwrite_at_all_c(mpich.get(), offset(step), data.data(), count,
                                           MPI_DOUBLE, &request),
                  "MPI_File_iwrite_at_all_c");
      },
      [&] {
        if (request == MPI_REQUEST_NULL) return;
        int done = 0;
        check_mpi(MPI_Test(&request, &done, &request_status), "MPI_Test");
      },
      [&] {
        if (request != MPI_REQUEST_NULL) {
          check_mpi(MPI_Wait(&request, &request_status), "MPI_Wait");
        }
        check_bytes("MPI_File_iwrite_at_all_c", mpich_bytes(request_status));
        if (options.durable) check_mpi(MPI_File_sync(mpich.get()), "MPI_File_sync");
      }};

  // t_io: blocking writes of the initial checkpoint into places past the
  // loop's, so that each allocates file blocks as the loop's writes do;
  // the implementations alternate, and each keeps its median.
  simulation.reset();
  simulation.save(checkpoint);
  constexpr int kSamples = 3;
  std::vector<double> flowio_io_samples, mpich_io_samples;
  for (int sample = 0; sample < kSamples; ++sample) {
    const std::int64_t place = options.steps + sample;
    flowio_io_samples.push_back(time_collective([&] { flowio_writer.write(checkpoint, place); }));
    mpich_io_samples.push_back(time_collective([&] { mpich_writer.write(checkpoint, place); }));
  }
  const double flowio_t_io = median(flowio_io_samples);
  const double mpich_t_io = median(mpich_io_samples);

  // A step lasts about as long as flowio's checkpoint write, which could
  // then hide entirely behind it. Two trial steps separate the cost of a
  // sweep from what a step costs besides (the derived variables).
  std::int64_t sweeps = options.sweeps;
  if (sweeps == 0) {
    constexpr int kFewSweeps = 2, kManySweeps = 10;
    const double few = time_collective([&] { simulation.step(kFewSweeps, [] {}); });
    const double many = time_collective([&] { simulation.step(kManySweeps, [] {}); });
    const double per_sweep = std::max(many - few, 1e-9) / (kManySweeps - kFewSweeps);
    const double besides = std::max(few - kFewSweeps * per_sweep, 0.0);
    sweeps = std::clamp<std::int64_t>(std::llround((flowio_t_io - besides) / per_sweep), 1, 100000);
  }
  std::vector<double> compute_samples;
  for (int sample = 0; sample < kSamples; ++sample) {
    compute_samples.push_back(time_collective([&] { simulation.step(sweeps, [] {}); }));
  }
  const double t_compute = median(compute_samples);

  const LoopTimes flowio_times =
      run_steps(simulation, flowio_writer, options.steps, sweeps, checkpoint);
  const std::vector<flowio::OperationStatistics> operations = file.statistics();
  if (operations.empty()) throw std::runtime_error("flowio kept no operation statistics");
  const flowio::OperationStatistics last_write = operations.back();
  file.close();
  const LoopTimes mpich_times =
      run_steps(simulation, mpich_writer, options.steps, sweeps, checkpoint);
  mpich.close();

  // The simulation is deterministic, so both loops saved the same bytes.
  int differing = flowio_times.checksums != mpich_times.checksums ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &differing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce");

  // Analysis: flowio reads its checkpoints back and summarizes the
  // temperature; MPICH reads both files, which checks where flowio put
  // the bytes, not only that its write and read agree.
  std::vector<double> mean_temperature, peak_temperature;
  std::vector<int> bad_flowio_by_flowio, bad_flowio_by_mpich, bad_mpich_by_mpich;
  {
    flowio::File reader = flowio::File::open(MPI_COMM_WORLD, flowio_path, flowio::Mode::rdonly);
    reader.set_view(0, MPI_DOUBLE, simulation.block_in_file());
    const std::int64_t block_cells = simulation.block_cells();
    bad_flowio_by_flowio = verify(
        [&](std::vector<double>& buffer, std::int64_t step) {
          check_bytes("flowio read_at_all",
                      reader.read_at_all(offset(step), buffer.data(), count, MPI_DOUBLE));
        },
        flowio_times.checksums, checkpoint,
        [&](const std::vector<double>& buffer) {
          // The temperature is the first variable of the checkpoint.
          double sum_and_peak[2] = {0, 0};
          for (std::int64_t cell = 0; cell < block_cells; ++cell) {
            sum_and_peak[0] += buffer[static_cast<std::size_t>(cell)];
            sum_and_peak[1] = std::max(sum_and_peak[1], buffer[static_cast<std::size_t>(cell)]);
          }
          double total = 0, peak = 0;
          check_mpi(MPI_Allreduce(&sum_and_peak[0], &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
                    "MPI_Allreduce");
          check_mpi(MPI_Allreduce(&sum_and_peak[1], &peak, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                    "MPI_Allreduce");
          mean_temperature.push_back(total / static_cast<double>(global_cells));
          peak_temperature.push_back(peak);
        });
    reader.close();
  }
  for (const auto& [path, checksums, bad] :
       {std::tuple{flowio_path, &flowio_times.checksums, &bad_flowio_by_mpich},
        std::tuple{mpich_path, &mpich_times.checksums, &bad_mpich_by_mpich}}) {
    MpichFile reader(path, MPI_MODE_RDONLY);
    check_mpi(MPI_File_set_view(reader.get(), 0, MPI_DOUBLE, simulation.block_in_file(), "native",
                                MPI_INFO_NULL),
              "MPI_File_set_view");
    *bad = verify(
        [&](std::vector<double>& buffer, std::int64_t step) {
          MPI_Status status;
          check_mpi(MPI_File_read_at_all_c(reader.get(), offset(step), buffer.data(), count,
                                           MPI_DOUBLE, &status),
                    "MPI_File_read_at_all_c");
          check_bytes("MPI_File_read_at_all_c", mpich_bytes(status));
        },
        *checksums, checkpoint, nullptr);
    reader.close();
  }

  int bad_steps = 0;
  for (std::size_t step = 0; step < bad_flowio_by_flowio.size(); ++step) {
    bad_steps += bad_flowio_by_flowio[step] + bad_flowio_by_mpich[step] + bad_mpich_by_mpich[step];
  }
  const bool passed = bad_steps == 0 && differing == 0;
  if (rank != 0) return passed;

  const double mib = static_cast<double>(checkpoint_bytes) / 1048576.0;
  const auto overlap = [t_compute](double t_io, const LoopTimes& times) {
    return (t_io + t_compute - times.t_total) / std::min(t_io, t_compute);
  };
  const double flowio_overlap = overlap(flowio_t_io, flowio_times),
               mpich_overlap = overlap(mpich_t_io, mpich_times);
  const double flowio_added = flowio_times.t_total - t_compute,
               mpich_added = mpich_times.t_total - t_compute;
  const int* grid = simulation.process_grid();
  std::printf(
      "insitu: %d ranks on a %dx%dx%d process grid, global grid %d^3, %d variables "
      "(temperature, pressure, velocity x/y/z)\n"
      "checkpoint %.2f MiB, %lld steps of %lld stencil sweeps, one file per implementation "
      "with step k at byte k * %lld:\n  %s\n  %s\n",
      ranks, grid[0], grid[1], grid[2], global_size, kVariables, mib,
      static_cast<long long>(options.steps), static_cast<long long>(sweeps),
      static_cast<long long>(checkpoint_bytes), flowio_path.c_str(), mpich_path.c_str());
  if (options.durable) {
    std::printf(
        "checkpoints are durable: each is on storage before its step ends (flowio: hint "
        "flowio_durable, the sync inside the nonblocking write; MPICH: MPI_File_sync after "
        "MPI_Wait). A device write can hide behind computation; a page-cache write is copying by "
        "the same cores the simulation uses (%d ranks on %ld cores), so it could not.\n\n",
        ranks, sysconf(_SC_NPROCESSORS_ONLN));
  } else {
    std::printf(
        "checkpoints go to the page cache (--durable=0): writing is copying by the cores the "
        "simulation uses (%d ranks on %ld cores), so little of it can hide.\n\n",
        ranks, sysconf(_SC_NPROCESSORS_ONLN));
  }
  // A ratio is printed only where both sides are positive: one of a
  // negative number means nothing.
  const auto ratio = [](double a, double b) {
    char text[32] = "n/a";
    if (a > 0 && b > 0) std::snprintf(text, sizeof text, "%.2f", a / b);
    return std::string(text);
  };
  std::printf("%-44s %12s %12s %14s\n", "", "flowio", "MPICH", "MPICH/flowio");
  std::printf("%-44s %12.4f %12.4f %14s\n", "t_io: blocking checkpoint write (s)", flowio_t_io,
              mpich_t_io, ratio(mpich_t_io, flowio_t_io).c_str());
  std::printf("%-44s %12.4f %12.4f\n", "t_compute: one step alone (s)", t_compute, t_compute);
  std::printf("%-44s %12.4f %12.4f %14s\n", "t_total: step with checkpoint, median (s)",
              flowio_times.t_total, mpich_times.t_total,
              ratio(mpich_times.t_total, flowio_times.t_total).c_str());
  std::printf("%-44s %12.4f %12.4f %14s\n", "added: t_total - t_compute (s)", flowio_added,
              mpich_added, ratio(mpich_added, flowio_added).c_str());
  std::printf("%-44s %12.3f %12.3f\n", "overlap", flowio_overlap, mpich_overlap);
  for (const auto& [name, t_io, times, overlap_value] :
       {std::tuple{"flowio", flowio_t_io, &flowio_times, flowio_overlap},
        std::tuple{"mpich", mpich_t_io, &mpich_times, mpich_overlap}}) {
    std::printf(
        "insitu impl=%s ranks=%d mib=%.2f steps=%lld sweeps=%lld durable=%d t_io=%.4g "
        "t_compute=%.4g t_total=%.4g added=%.4g t_writing=%.4g overlap=%.3f\n",
        name, ranks, mib, static_cast<long long>(options.steps), static_cast<long long>(sweeps),
        options.durable ? 1 : 0, t_io, t_compute, times->t_total, times->t_total - t_compute,
        times->writing, overlap_value);
  }
  std::printf("\n");

  std::printf(
      "flowio's last checkpoint write on rank 0 (File::statistics().back()): operation %llu, "
      "%lld bytes in %.4f s, %d aggregators (rank 0 %s), %lld iterations, method '%s', "
      "realms %s, exchange %s\n",
      static_cast<unsigned long long>(last_write.sequence),
      static_cast<long long>(last_write.bytes), last_write.seconds, last_write.aggregators,
      last_write.aggregator ? "one" : "not one", static_cast<long long>(last_write.iterations),
      last_write.method.c_str(), last_write.realm_policy.c_str(), last_write.exchange.c_str());
  std::printf("  %-10s %10s %14s %10s %12s\n", "stage", "seconds", "bytes", "messages",
              "io requests");
  for (const flowio::StageStatistics& stage : last_write.stages) {
    std::printf("  %-10s %10.4f %14lld %10lld %12lld\n", stage.name.c_str(), stage.seconds,
                static_cast<long long>(stage.bytes), static_cast<long long>(stage.messages),
                static_cast<long long>(stage.io_requests));
  }

  std::printf("\nanalysis: every checkpoint read back and compared with its checksum\n");
  std::printf("  %4s %14s %14s %18s %18s %18s\n", "step", "mean T (K)", "peak T (K)",
              "flowio by flowio", "flowio by MPICH", "MPICH by MPICH");
  const auto verdict = [](int bad) { return bad == 0 ? "bit-exact" : "MISMATCH"; };
  for (std::size_t step = 0; step < mean_temperature.size(); ++step) {
    std::printf("  %4zu %14.6f %14.6f %18s %18s %18s\n", step, mean_temperature[step],
                peak_temperature[step], verdict(bad_flowio_by_flowio[step]),
                verdict(bad_flowio_by_mpich[step]), verdict(bad_mpich_by_mpich[step]));
  }
  if (differing != 0) std::printf("the two loops saved different checkpoints\n");
  std::printf("\ntrace: %s\n", trace_path.c_str());
  std::printf("insitu: %s\n", passed ? "all checkpoints verified" : "VERIFICATION FAILED");
  return passed;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const std::exception& error) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "insitu: %s\nusage: insitu [--mib=64] [--steps=5] [--sweeps=0] [--dir=PATH] "
                   "[--trace=insitu_trace.json]\n",
                   error.what());
    }
    MPI_Finalize();
    return 2;
  }
  // flowio reads FLOWIO_TRACE when it first records, so it must be set
  // before the first File::open.
  std::string trace_path;
  if (const char* from_environment = std::getenv("FLOWIO_TRACE")) {
    trace_path = std::string(from_environment) + " (from FLOWIO_TRACE)";
  } else {
    setenv("FLOWIO_TRACE", options.trace.c_str(), 1);
    trace_path = std::filesystem::absolute(options.trace).string() +
                 " (Perfetto / Chrome JSON: ui.perfetto.dev or chrome://tracing)";
  }
  bool passed = false;
  try {
    passed = run(options, trace_path);
  } catch (const std::exception& error) {
    // Other ranks may be waiting in a collective call: end the whole job.
    std::fprintf(stderr, "insitu: rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return passed ? 0 : 1;
}
