// measure_rounds(): the demo's measurement of one implementation. The
// simulation runs in rounds from its initial state; each round times,
// one right after another, the three things the overlap compares:
//   t_io       a blocking checkpoint write of the current state (into
//              the scratch slot, number `rounds`, past the loop's slots,
//              whose blocks are released after each such write, so that
//              each allocates file blocks as the loop's writes do);
//   t_total    a step with the same checkpoint written meanwhile: start the
//              write (into slot k), compute the step, wait;
//   t_compute  a step alone, without I/O (after that step in even rounds,
//              before it in odd ones, so that a load growing or shrinking
//              through the run favours neither).
// Timing the three within one round, rather than each in a block of its
// own, lets all three see the same load from the rest of the machine
// (other programs, the page cache's writeback): a round's overlap compares
// like with like, and the medians over the rounds drop the rounds that
// some burst disturbed.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint_buffer.h"
#include "checkpoint_writers.h"
#include "simulation.h"

namespace insitu {

// Times are the slowest rank's, medians over the rounds.
struct RoundsMeasurement {
  double t_io = 0;
  double t_compute = 0;
  double t_total = 0;
  // The median over the rounds of each round's t_total - t_compute: what
  // a checkpoint costs the simulation per step (0 when it hides
  // entirely). Paired within a round, the difference does not see the
  // load drifting between rounds, as the difference of the medians would.
  double added = 0;
  // (t_io + t_compute - t_total) / min(t_io, t_compute), with added for
  // t_total - t_compute: (t_io - added) / min(t_io, t_compute).
  double overlap = 0;
  // Seconds inside start() and finish() over all rounds (slowest rank):
  // what the write cost the simulation's thread directly.
  double writing = 0;
  // CPU seconds used by threads other than the simulation's (flowio's
  // progress and I/O threads; MPICH's, if any) during the steps with a
  // write in flight, summed over ranks, mean per step.
  double other_threads_cpu = 0;
  // This rank's checkpoint of round k, which slot k holds.
  std::vector<std::uint64_t> checksums;
};

// Runs `rounds` rounds from the simulation's initial state, each with
// steps of `sweeps` stencil sweeps; `checkpoint` holds the rank's
// checkpoint; release_scratch_slot() (collective) gives the scratch
// slot's file blocks back. Collective over MPI_COMM_WORLD.
RoundsMeasurement measure_rounds(Simulation& simulation, CheckpointWriter& writer,
                                 std::int64_t rounds, std::int64_t sweeps,
                                 CheckpointBuffer& checkpoint,
                                 const std::function<void()>& release_scratch_slot);

// How many stencil sweeps make a step last about `seconds` (at least one).
// Pairs of trial steps (2 and 10 sweeps) separate the cost of a sweep from
// what a step costs besides (the derived variables); the medians of three
// pairs are used. Collective; advances the simulation.
std::int64_t sweeps_lasting(Simulation& simulation, double seconds);

}  // namespace insitu
