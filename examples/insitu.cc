// The README's main job: in-situ checkpointing. A small 3-D heat diffusion
// simulation (simulation.h) checkpoints its state while it computes: it
// copies the state into a checkpoint buffer, starts writing it with
// File::iwrite_at_all, computes the next step while the write proceeds,
// then waits (Future::get()). After the steps, an analysis pass reads every
// checkpoint back with read_at_all, checks it bit for bit against the
// checksum taken when it was written, and prints the mean and peak
// temperature of each. The same steps run again, from the same initial
// state, with MPICH's MPI-IO (checkpoint_writers.h) on a second file, and
// MPICH also reads both files, which checks where flowio put the bytes.
//
// Overlap needs a resource the computation leaves free. Copying (into the
// page cache, between ranks) is done by the cores the simulation computes
// on; with as many ranks as cores (or more: 4 ranks on this 2-core machine)
// none is free, so a checkpoint that is copying cannot hide and the
// background write only slows the step. The defaults therefore make the
// checkpoint device time, which can hide:
//   - durable (--durable=1): a checkpoint counts once it is on storage.
//     flowio's file has the hint flowio_durable=enable, which makes the
//     sync part of the nonblocking write; MPI-IO has no nonblocking sync,
//     so MPICH's loop calls MPI_File_sync after MPI_Wait;
//   - direct (--direct=1): flowio's file has flowio_direct_io=enable, and
//     the checkpoint buffer is page-aligned, so the device takes the data
//     by DMA (O_DIRECT) and the CPU copies nothing. MPICH's ufs driver has
//     no O_DIRECT: its writes go through the page cache;
//   - slabs (--decomposition=slabs): the grid is cut along x, the file's
//     slowest dimension, so a rank's part of each variable is one
//     contiguous run, which flowio lets each rank write itself; the grid's
//     side is a multiple of 32, so every run starts and ends on a 4 KiB
//     boundary, as O_DIRECT needs. --decomposition=blocks uses the process
//     grid MPI_Dims_create gives (2x2x1 on 4 ranks), whose short runs
//     flowio gathers on aggregators (two-phase I/O): copying again.
// The demo prints which of these held (the file system may refuse
// O_DIRECT: tmpfs does) and why.
//
// File layout: one file per implementation, slot s at byte
// s * checkpoint_bytes. Inside a checkpoint each variable is the whole
// global array of doubles in C order (x slowest), one variable after
// another. A rank's view is its block (MPI_Type_create_subarray over the
// global array), which tiles once per variable; its memory is contiguous,
// variable after variable. Slots 0 .. steps-1 hold the runs' checkpoints
// (their blocks given back before each run), slot `steps` takes the
// blocking writes (given back after each).
//
// Measurement (measured_runs.h): `rounds` rounds, each running the
// simulation `steps` steps from its initial state three times: without
// checkpoints, and with a checkpoint every step on flowio and on MPICH
// (the write in flight while the step computes), in turn first; and
// timing one checkpoint written alone, blocking, with each. The report
// gives, with the median and the range over the rounds: the run's time
// with a checkpoint every step, what a checkpoint adds per step ((run -
// bare run) / steps, paired within each round), and the blocking write;
// then a one-line verdict that names a winner only when every round
// agrees (insitu_report.h); then the statistics of flowio's last
// checkpoint write (File::statistics().back()) on rank 0. A step is as
// many stencil sweeps as take about four times as long as a blocking
// flowio write (a nonblocking write hands work between threads and
// processes, each hand-off waiting for a core), unless --sweeps says.
//
// Usage: mpiexec -n 2 bazel-bin/examples/insitu [--mib=80] [--rounds=5]
//   [--steps=8] [--sweeps=0 (0: automatic)] [--durable=1] [--direct=1]
//   [--decomposition=slabs|blocks] [--dir=$TMPDIR, else /tmp]
//   [--trace=insitu_trace.json]   (--help lists them)
// --mib sets the checkpoint size (the global grid is the cube of side a
// multiple of 32 that comes closest). Unless FLOWIO_TRACE is set already,
// flowio writes a Perfetto / Chrome trace of its collective operations to
// --trace. The data files are removed at the end; the trace stays. Exit
// code: 0 when every checkpoint reads back bit-exact, 1 when one does not
// or an error occurs, 2 for bad options.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint_buffer.h"
#include "checkpoint_verification.h"
#include "checkpoint_writers.h"
#include "collective_timing.h"
#include "flowio/flowio.h"
#include "insitu_options.h"
#include "insitu_report.h"
#include "measured_runs.h"
#include "mpich_file.h"
#include "simulation.h"

namespace insitu {
namespace {

using flowio::check_mpi;

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

// How many blocking checkpoint writes a step lasts, unless --sweeps says.
constexpr double kStepPerWrite = 4;

// Gives the file blocks of `bytes` at `offset` of `path` back to the file
// system (a hole reads as zeros), so that the next write into the range
// allocates blocks as a new checkpoint's would. Where the file system
// cannot punch holes, that write rewrites blocks instead, which costs it
// less: the demo says so.
void release_file_range(const std::string& path, std::int64_t offset, std::int64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  // The hole is made durable here, untimed: otherwise the next durable
  // write's sync would commit the freeing of the blocks too.
  const bool released =
      fd >= 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, bytes) == 0 &&
      fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  static bool said_so = false;
  if (!released && !said_so) {
    said_so = true;
    std::fprintf(stderr, "insitu: cannot punch a hole in %s: checkpoints rewrite blocks\n",
                 path.c_str());
  }
}

// The side of the cube grid, a multiple of 32 (every x-plane of doubles is
// then a multiple of 8 KiB), whose checkpoint comes closest to `mib`.
int global_size_for(std::int64_t mib) {
  const double wanted_cells = static_cast<double>(mib) * 1048576.0 / (kVariables * 8.0);
  return 32 * std::max(1, static_cast<int>(std::lround(std::cbrt(wanted_cells) / 32)));
}

// The whole demo; returns whether every check passed.
bool run(const InsituOptions& options, const std::string& trace_path) {
  InsituReport report;
  report.options = options;
  report.trace = trace_path;
  report.cores = sysconf(_SC_NPROCESSORS_ONLN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &report.ranks);
  report.global_size = global_size_for(options.mib);
  Simulation simulation(report.global_size, options.decomposition);
  std::copy_n(simulation.process_grid(), 3, report.process_grid);
  const std::int64_t global_cells =
      std::int64_t{report.global_size} * report.global_size * report.global_size;
  report.checkpoint_bytes = kVariables * global_cells * 8;
  const MPI_Count count = simulation.checkpoint_values();
  CheckpointBuffer checkpoint(static_cast<std::size_t>(count));

  int pid = static_cast<int>(getpid());
  check_mpi(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  const std::string stem = options.dir + "/insitu_" + std::to_string(pid);
  report.flowio_path = stem + "_flowio.dat";
  report.mpich_path = stem + "_mpich.dat";
  const RemovedAtEnd scratch({report.flowio_path, report.mpich_path});
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

  flowio::File file = flowio::File::open(
      MPI_COMM_WORLD, report.flowio_path, flowio::Mode::create | flowio::Mode::rdwr,
      {{"flowio_durable", options.durable ? "enable" : "disable"},
       {"flowio_direct_io", options.direct ? "enable" : "disable"}});
  file.set_view(0, MPI_DOUBLE, simulation.block_in_file());
  const flowio::Hints in_force = file.hints();
  const auto direct = in_force.find("flowio_direct_io");
  report.direct_in_force = direct != in_force.end() && direct->second == "enable";
  MpichFile mpich(report.mpich_path, MPI_MODE_CREATE | MPI_MODE_RDWR);
  check_mpi(MPI_File_set_view(mpich.get(), 0, MPI_DOUBLE, simulation.block_in_file(), "native",
                              MPI_INFO_NULL),
            "MPI_File_set_view");
  FlowioCheckpointWriter flowio_writer(file, count);
  MpichCheckpointWriter mpich_writer(mpich.get(), count, options.durable);

  // Rank 0 gives the blocks of a range of slots back (untimed).
  const auto releaser = [&](const std::string& path) {
    return [&, path](std::int64_t first, std::int64_t slots) {
      if (rank == 0) {
        release_file_range(path, first * report.checkpoint_bytes, slots * report.checkpoint_bytes);
      }
      check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    };
  };
  const Contender flowio_contender{flowio_writer, releaser(report.flowio_path)};
  const Contender mpich_contender{mpich_writer, releaser(report.mpich_path)};

  // A step lasts about kStepPerWrite blocking flowio writes (the median of
  // three), so that the write, with the hand-offs between threads and
  // processes that a nonblocking write makes, can end before the step does.
  report.sweeps = options.sweeps;
  if (report.sweeps == 0) {
    simulation.reset();
    simulation.save(checkpoint);
    std::vector<double> io_samples;
    for (int sample = 0; sample < 3; ++sample) {
      io_samples.push_back(
          time_collective([&] { flowio_writer.write(checkpoint, options.steps); }));
      flowio_contender.release(options.steps, 1);
    }
    report.sweeps = sweeps_lasting(simulation, kStepPerWrite * median(io_samples));
  }

  report.runs = measure_runs(simulation, flowio_contender, mpich_contender,
                             {options.rounds, options.steps, report.sweeps}, checkpoint);
  const std::vector<flowio::OperationStatistics> operations = file.statistics();
  if (operations.empty()) throw std::runtime_error("flowio kept no operation statistics");
  report.last_write = operations.back();
  file.close();
  mpich.close();

  // Analysis: flowio reads its checkpoints back and summarizes the
  // temperature; MPICH reads both files.
  const auto check_bytes = [count](const char* who, std::size_t bytes) {
    if (bytes != static_cast<std::size_t>(count) * sizeof(double)) {
      throw std::runtime_error(std::string(who) + " moved " + std::to_string(bytes) + " bytes");
    }
  };
  {
    flowio::File reader =
        flowio::File::open(MPI_COMM_WORLD, report.flowio_path, flowio::Mode::rdonly);
    reader.set_view(0, MPI_DOUBLE, simulation.block_in_file());
    const std::size_t block_cells = static_cast<std::size_t>(simulation.block_cells());
    report.bad_flowio_by_flowio = verify_checkpoints(
        [&](CheckpointBuffer& buffer, std::int64_t slot) {
          check_bytes("flowio read_at_all",
                      reader.read_at_all(slot * count, buffer.data(), count, MPI_DOUBLE));
        },
        report.runs.checksums, checkpoint,
        [&](const CheckpointBuffer& buffer) {
          // The temperature is the first variable of the checkpoint.
          double sum = 0, peak = 0;
          for (std::size_t cell = 0; cell < block_cells; ++cell) {
            sum += buffer[cell];
            peak = std::max(peak, buffer[cell]);
          }
          report.mean_temperature.push_back(sum_over_ranks(sum) /
                                            static_cast<double>(global_cells));
          report.peak_temperature.push_back(max_over_ranks(peak));
        });
    reader.close();
  }
  for (const auto& [path, bad] : {std::pair{report.flowio_path, &report.bad_flowio_by_mpich},
                                  std::pair{report.mpich_path, &report.bad_mpich_by_mpich}}) {
    MpichFile reader(path, MPI_MODE_RDONLY);
    check_mpi(MPI_File_set_view(reader.get(), 0, MPI_DOUBLE, simulation.block_in_file(), "native",
                                MPI_INFO_NULL),
              "MPI_File_set_view");
    *bad = verify_checkpoints(
        [&](CheckpointBuffer& buffer, std::int64_t slot) {
          MPI_Status status;
          check_mpi(MPI_File_read_at_all_c(reader.get(), slot * count, buffer.data(), count,
                                           MPI_DOUBLE, &status),
                    "MPI_File_read_at_all_c");
          MPI_Count values = 0;
          check_mpi(MPI_Get_count_c(&status, MPI_DOUBLE, &values), "MPI_Get_count_c");
          check_bytes("MPI_File_read_at_all_c", static_cast<std::size_t>(values) * sizeof(double));
        },
        report.runs.checksums, checkpoint, nullptr);
    reader.close();
  }

  int bad_steps = 0;
  for (std::size_t step = 0; step < report.bad_flowio_by_flowio.size(); ++step) {
    bad_steps += report.bad_flowio_by_flowio[step] + report.bad_flowio_by_mpich[step] +
                 report.bad_mpich_by_mpich[step];
  }
  report.passed = bad_steps == 0;
  if (rank == 0) print_insitu_report(report);
  return report.passed;
}

}  // namespace
}  // namespace insitu

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const insitu::ParsedInsituOptions parsed = insitu::parse_insitu_options(argc, argv);
  if (!parsed.options) {
    if (rank == 0) std::fputs(parsed.message.c_str(), parsed.exit_code == 0 ? stdout : stderr);
    MPI_Finalize();
    return parsed.exit_code;
  }
  const insitu::InsituOptions& options = *parsed.options;
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
    passed = insitu::run(options, trace_path);
  } catch (const std::exception& error) {
    // Other ranks may be waiting in a collective call: end the whole job.
    std::fprintf(stderr, "insitu: rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return passed ? 0 : 1;
}
