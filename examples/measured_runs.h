// measure_runs(): what the demo measures, the question a user of it asks:
// how long does the simulation take with a checkpoint every step, on
// flowio and on MPICH's MPI-IO, and what does each checkpoint add to it?
//
// The measurement is in rounds. Each round runs the simulation three
// times, `steps` steps from its initial state each: without checkpoints
// (the bare run), and with a checkpoint every step written by each
// implementation (the state is copied into the checkpoint buffer, the
// write started, the step computed, the write waited for). The three runs
// of a round take turns going first, so that a load that grows or shrinks
// through the round favours none, and each is timed from a common start
// to the slowest rank's end. A round also times one checkpoint written
// alone, blocking, with each implementation: what a checkpoint costs when
// nothing hides it.
//
// A checkpoint's added cost per step is, per round, (checkpointed run -
// bare run) / steps: 0 when the writes hide entirely behind computation,
// the blocking write's time when nothing hides. Computed within a round,
// it compares runs that saw the same load from the rest of the machine.
// Before each checkpointed run the file's blocks are given back, so that
// every checkpoint allocates its blocks as a new checkpoint would.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint_buffer.h"
#include "checkpoint_writers.h"
#include "simulation.h"

namespace insitu {

// One implementation the demo measures: its writer, and how to give its
// file's blocks back.
struct Contender {
  CheckpointWriter& writer;
  // Gives the file blocks of slots [first, first + count) back to the file
  // system. Collective.
  std::function<void(std::int64_t first, std::int64_t count)> release;
};

struct RunSettings {
  std::int64_t rounds = 5;
  std::int64_t steps = 8;   // per run
  std::int64_t sweeps = 1;  // stencil sweeps per step
};

// One contender's samples, one per round, in seconds.
struct ContenderRuns {
  std::vector<double> run;       // `steps` steps with a checkpoint every step
  std::vector<double> added;     // (run - the round's bare run) / steps
  std::vector<double> blocking;  // one checkpoint written alone, blocking
  // CPU seconds used by threads other than the simulation's (flowio's
  // progress and I/O threads; MPICH's, if any) during the checkpointed
  // runs, summed over ranks, per step.
  double other_threads_cpu = 0;
};

struct RunsMeasurement {
  std::vector<double> bare;  // per round: `steps` steps without checkpoints
  ContenderRuns flowio, mpich;
  // This rank's checkpoint of step k, which slot k of each file holds at
  // the end.
  std::vector<std::uint64_t> checksums;
};

// Runs the rounds; `checkpoint` holds the rank's checkpoint. Slots 0 ..
// steps - 1 of each file take the runs' checkpoints, slot `steps` the
// blocking ones (released after each). Collective over MPI_COMM_WORLD.
RunsMeasurement measure_runs(Simulation& simulation, const Contender& flowio,
                             const Contender& mpich, const RunSettings& settings,
                             CheckpointBuffer& checkpoint);

// How many stencil sweeps make a step last about `seconds` (at least one).
// Pairs of trial steps (2 and 10 sweeps) separate the cost of a sweep from
// what a step costs besides (the derived variables); the medians of three
// pairs are used. Collective; advances the simulation.
std::int64_t sweeps_lasting(Simulation& simulation, double seconds);

}  // namespace insitu
