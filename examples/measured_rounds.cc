#include "measured_rounds.h"

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>

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

}  // namespace

RoundsMeasurement measure_rounds(Simulation& simulation, CheckpointWriter& writer,
                                 std::int64_t rounds, std::int64_t sweeps,
                                 CheckpointBuffer& checkpoint,
                                 const std::function<void()>& release_scratch_slot) {
  RoundsMeasurement result;
  std::vector<double> io_samples, compute_samples, total_samples, added_samples;
  double writing = 0;
  std::int64_t other_cpu_us = 0;
  const auto poll = [&writer] { writer.poll(); };
  simulation.reset();
  for (std::int64_t round = 0; round < rounds; ++round) {
    simulation.save(checkpoint);
    result.checksums.push_back(checksum(checkpoint));
    const double t_io = time_collective([&] { writer.write(checkpoint, rounds); });
    release_scratch_slot();

    const auto step_with_write = [&] {
      check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      const std::int64_t cpu_before = other_threads_cpu_microseconds();
      const double begin = MPI_Wtime();
      writer.start(checkpoint, round);
      const double started = MPI_Wtime();
      simulation.step(sweeps, poll);
      const double computed = MPI_Wtime();
      writer.finish();
      const double end = MPI_Wtime();
      other_cpu_us += other_threads_cpu_microseconds() - cpu_before;
      writing += (started - begin) + (end - computed);
      return max_over_ranks(end - begin);
    };
    const auto step_alone = [&] {
      return time_collective([&] { simulation.step(sweeps, [] {}); });
    };
    // Odd rounds take the two steps in the other order, so that a load
    // that grows or shrinks through the run favours neither.
    double t_total = 0, t_compute = 0;
    if (round % 2 == 0) {
      t_total = step_with_write();
      t_compute = step_alone();
    } else {
      t_compute = step_alone();
      t_total = step_with_write();
    }
    io_samples.push_back(t_io);
    compute_samples.push_back(t_compute);
    total_samples.push_back(t_total);
    added_samples.push_back(t_total - t_compute);
  }
  result.t_io = median(io_samples);
  result.t_compute = median(compute_samples);
  result.t_total = median(total_samples);
  result.added = median(added_samples);
  result.overlap = (result.t_io - result.added) / std::min(result.t_io, result.t_compute);
  result.writing = max_over_ranks(writing);
  // The process's and the thread's counts are read one after the other,
  // so an idle run may come out a microsecond below zero.
  result.other_threads_cpu =
      std::max(0.0, sum_over_ranks(static_cast<double>(other_cpu_us) * 1e-6)) /
      static_cast<double>(rounds);
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
