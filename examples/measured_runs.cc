#include "measured_runs.h"

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "collective_timing.h"
#include "flowio/flowio.h"

namespace insitu {
namespace {

using flowio::check_mpi;

std::int64_t microseconds_of(const timeval& time) {
  return std::int64_t{time.tv_sec} * 1'000'000 + time.tv_usec;
}

// CPU microseconds (user and system) that the process's threads other than
// the calling one have used so far, as far as they are still running (the
// threads of flowio and MPICH live as long as the process).
std::int64_t other_threads_cpu_microseconds() {
  rusage process{}, thread{};
  getrusage(RUSAGE_SELF, &process);
  getrusage(RUSAGE_THREAD, &thread);
  return microseconds_of(process.ru_utime) + microseconds_of(process.ru_stime) -
         microseconds_of(thread.ru_utime) - microseconds_of(thread.ru_stime);
}

struct RunTime {
  double seconds = 0;             // the slowest rank's
  std::int64_t other_cpu_us = 0;  // this rank's threads besides the caller
};

// Runs `steps` steps from the initial state; with a writer, the state
// before each step is checkpointed into slot `step` while the step
// computes.
RunTime run_steps(Simulation& simulation, CheckpointWriter* writer, const RunSettings& settings,
                  CheckpointBuffer& checkpoint) {
  const auto poll = [writer] {
    if (writer != nullptr) writer->poll();
  };
  simulation.reset();
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const std::int64_t cpu_before = other_threads_cpu_microseconds();
  const double begin = MPI_Wtime();
  for (std::int64_t step = 0; step < settings.steps; ++step) {
    if (writer != nullptr) {
      simulation.save(checkpoint);
      writer->start(checkpoint, step);
    }
    simulation.step(settings.sweeps, poll);
    if (writer != nullptr) writer->finish();
  }
  const double elapsed = MPI_Wtime() - begin;
  const std::int64_t other_cpu_us = other_threads_cpu_microseconds() - cpu_before;
  return {max_over_ranks(elapsed), other_cpu_us};
}

// The checkpoints every run writes, this rank's checksum of each: the
// simulation is deterministic, so every run from the initial state saves
// the same ones. Untimed; it also warms the caches and the simulation up.
std::vector<std::uint64_t> reference_checksums(Simulation& simulation, const RunSettings& settings,
                                               CheckpointBuffer& checkpoint) {
  std::vector<std::uint64_t> checksums;
  simulation.reset();
  for (std::int64_t step = 0; step < settings.steps; ++step) {
    simulation.save(checkpoint);
    checksums.push_back(checksum(checkpoint));
    simulation.step(settings.sweeps, [] {});
  }
  return checksums;
}

}  // namespace

RunsMeasurement measure_runs(Simulation& simulation, const Contender& flowio,
                             const Contender& mpich, const RunSettings& settings,
                             CheckpointBuffer& checkpoint) {
  RunsMeasurement result;
  result.checksums = reference_checksums(simulation, settings, checkpoint);
  std::int64_t flowio_cpu_us = 0, mpich_cpu_us = 0;
  const std::array<std::pair<const Contender*, ContenderRuns*>, 2> contenders = {
      std::pair{&flowio, &result.flowio}, std::pair{&mpich, &result.mpich}};
  for (std::int64_t round = 0; round < settings.rounds; ++round) {
    // The blocking writes, in turn first, into the scratch slot.
    for (std::int64_t turn = 0; turn < 2; ++turn) {
      const auto& [contender, runs] = contenders[static_cast<std::size_t>((round + turn) % 2)];
      runs->blocking.push_back(
          time_collective([&] { contender->writer.write(checkpoint, settings.steps); }));
      contender->release(settings.steps, 1);
    }
    // The three runs, in turn first: bare, flowio, MPICH.
    RunTime bare, flowio_run, mpich_run;
    for (std::int64_t turn = 0; turn < 3; ++turn) {
      switch ((round + turn) % 3) {
        case 0:
          bare = run_steps(simulation, nullptr, settings, checkpoint);
          break;
        case 1:
          flowio.release(0, settings.steps);
          flowio_run = run_steps(simulation, &flowio.writer, settings, checkpoint);
          break;
        default:
          mpich.release(0, settings.steps);
          mpich_run = run_steps(simulation, &mpich.writer, settings, checkpoint);
          break;
      }
    }
    result.bare.push_back(bare.seconds);
    flowio_cpu_us += flowio_run.other_cpu_us;
    mpich_cpu_us += mpich_run.other_cpu_us;
    const auto steps = static_cast<double>(settings.steps);
    for (const auto& [run, runs] :
         {std::pair{flowio_run.seconds, &result.flowio}, {mpich_run.seconds, &result.mpich}}) {
      runs->run.push_back(run);
      runs->added.push_back((run - bare.seconds) / steps);
    }
  }
  // The process's and the thread's counts are read one after the other,
  // so an idle run may come out a microsecond below zero.
  const auto checkpointed_steps = static_cast<double>(settings.rounds * settings.steps);
  for (const auto& [cpu_us, runs] :
       {std::pair{flowio_cpu_us, &result.flowio}, {mpich_cpu_us, &result.mpich}}) {
    runs->other_threads_cpu =
        std::max(0.0, sum_over_ranks(static_cast<double>(cpu_us) * 1e-6)) / checkpointed_steps;
  }
  return result;
}

std::int64_t sweeps_lasting(Simulation& simulation, double seconds) {
  constexpr int kFewSweeps = 2, kManySweeps = 10, kTrials = 3;
  std::vector<double> per_sweep_samples, besides_samples;
  for (int trial = 0; trial < kTrials; ++trial) {
    const double few = time_collective([&] { simulation.step(kFewSweeps, [] {}); });
    const double many = time_collective([&] { simulation.step(kManySweeps, [] {}); });
    const double per_sweep = std::max(many - few, 1e-9) / (kManySweeps - kFewSweeps);
    per_sweep_samples.push_back(per_sweep);
    besides_samples.push_back(std::max(few - kFewSweeps * per_sweep, 0.0));
  }
  const double per_sweep = median(per_sweep_samples), besides = median(besides_samples);
  return std::clamp<std::int64_t>(std::llround((seconds - besides) / per_sweep), 1, 100000);
}

}  // namespace insitu
