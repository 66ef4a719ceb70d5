// InsituReport: everything the demo measured and checked, and
// print_insitu_report(), which prints it on rank 0 (a human table and
// machine-readable key=value lines).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "insitu_options.h"
#include "measured_rounds.h"

namespace insitu {

struct InsituReport {
  InsituOptions options;
  int ranks = 0;
  long cores = 0;
  int process_grid[3] = {0, 0, 0};
  int global_size = 0;
  std::int64_t checkpoint_bytes = 0;
  std::int64_t sweeps = 0;
  std::string flowio_path, mpich_path;
  // Whether flowio's file took O_DIRECT (its hint flowio_direct_io in force).
  bool direct_in_force = false;
  RoundsMeasurement flowio, mpich;
  flowio::OperationStatistics last_write;  // flowio's last checkpoint write, this rank's
  std::vector<double> mean_temperature, peak_temperature;  // by checkpoint
  // Ranks whose part of checkpoint k did not read back as written.
  std::vector<int> bad_flowio_by_flowio, bad_flowio_by_mpich, bad_mpich_by_mpich;
  bool loops_differ = false;  // the two loops saved different checkpoints
  std::string trace;
  bool passed = false;
};

void print_insitu_report(const InsituReport& report);

}  // namespace insitu
