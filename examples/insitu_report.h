// InsituReport: everything the demo measured and checked, and
// print_insitu_report(), which prints it on rank 0: a table of the figures
// a user decides on (medians and ranges over the rounds), a one-line
// verdict, machine-readable key=value lines, flowio's last write and the
// analysis.
//
// The verdict names the faster implementation when the median over the
// rounds of MPICH's run over flowio's is beyond kClearMargin (above
// 1 + kClearMargin, or below 1 / (1 + kClearMargin)) and at least
// kAgreeingShare of the rounds are beyond it on the same side; otherwise
// it says there was no consistent difference. A round disturbed by the
// rest of a loaded machine then cannot turn the verdict, and runs in a row
// say the same thing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flowio/flowio.h"
#include "insitu_options.h"
#include "measured_runs.h"

namespace insitu {

inline constexpr double kClearMargin = 0.05;
inline constexpr double kAgreeingShare = 0.75;

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
  RunsMeasurement runs;
  flowio::OperationStatistics last_write;  // flowio's last checkpoint write, this rank's
  std::vector<double> mean_temperature, peak_temperature;  // by checkpoint
  // Ranks whose part of checkpoint k did not read back as written.
  std::vector<int> bad_flowio_by_flowio, bad_flowio_by_mpich, bad_mpich_by_mpich;
  std::string trace;
  bool passed = false;
};

// The median and the range of a set of samples (not empty).
struct Spread {
  double median = 0, low = 0, high = 0;
};
Spread spread_of(const std::vector<double>& samples);

enum class Verdict { flowio_faster, mpich_faster, no_clear_difference };
// The verdict from each round's MPICH run over flowio's run (not empty).
Verdict verdict_of(const std::vector<double>& mpich_over_flowio);

void print_insitu_report(const InsituReport& report);

}  // namespace insitu
