#include "collective_timing.h"

#include <mpi.h>

#include <algorithm>

#include "flowio/flowio.h"

namespace insitu {

using flowio::check_mpi;

double max_over_ranks(double value) {
  double result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce");
  return result;
}

double sum_over_ranks(double value) {
  double result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Allreduce");
  return result;
}

double time_collective(const std::function<void()>& operation) {
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double start = MPI_Wtime();
  operation();
  return max_over_ranks(MPI_Wtime() - start);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace insitu
