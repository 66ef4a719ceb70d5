// The peak resident set of a process (VmHWM) and its growth during one
// collective call, for the tests that bound memory by the hints.
#pragma once

#include <mpi.h>

#include <fstream>
#include <functional>
#include <string>

namespace flowio::testing {

// The peak resident set (VmHWM) in MiB.
inline double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

// Growth of the peak resident set during `call` (reset to the current set
// through /proc/self/clear_refs first), the largest of any rank of
// MPI_COMM_WORLD.
inline double peak_growth_mib(const std::function<void()>& call) {
  std::ofstream("/proc/self/clear_refs") << "5";  // peak := current
  const double before = peak_rss_mib();
  call();
  double growth = peak_rss_mib() - before, largest = 0;
  MPI_Allreduce(&growth, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return largest;
}

}  // namespace flowio::testing
