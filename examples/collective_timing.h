// Timing helpers for collective measurements over MPI_COMM_WORLD: every
// figure the demo prints is the slowest rank's.
#pragma once

#include <functional>
#include <vector>

namespace insitu {

// The largest of the ranks' `value`s. Collective.
double max_over_ranks(double value);
// The sum of the ranks' `value`s. Collective.
double sum_over_ranks(double value);
// Seconds of `operation` on the slowest rank, from a common start (a
// barrier). Collective.
double time_collective(const std::function<void()>& operation);
// The median of `values` (the mean of the middle two for an even count);
// `values` is not empty.
double median(std::vector<double> values);

}  // namespace insitu
