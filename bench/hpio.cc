// bench/hpio: does describing an access compactly pay? The NCIO access
// (bench/regions.h) with a noncontiguous file, its noncontiguous parts
// described once by vectors and once by hindexed types that list every
// region (the same typemap), each written and read collectively with flowio
// and with MPICH's MPI-IO in the same run, as in the HPIO comparison of
// Coloma et al. ("A new flexible MPI collective I/O implementation").
//
// Usage: mpiexec -n N bazel-bin/bench/hpio [--case=all|c-nc|nc-nc]
//   [--regions=4096] [--region_size=8] [--spacing=128] [--sync=0|1]
//   [--op=both|write|read] [--reps=5] [--dir=$TMPDIR]
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_support.h"
#include "bench/regions.h"

namespace {

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::AccessSettings settings = bench::access_settings(options);
  std::vector<std::string> cases = {"c-nc", "nc-nc"};
  const std::string chosen =
      options.choice("case", "all", {"all", "c-nc", "nc-nc"},
                     "access case (memory, then file; c contiguous, nc not); all: both");
  if (chosen != "all") cases = {chosen};
  bench::RegionPattern pattern = bench::region_options(options);
  options.finish();

  for (const std::string& name : cases) {
    pattern.name = name;
    for (const auto& [description, type] : {std::pair{bench::Description::compact, "compact"},
                                            {bench::Description::enumerated, "enumerated"}}) {
      const bench::RegionAccess access = bench::make_region_access(pattern, description);
      bench::compare_access(
          report, bench::region_fields(pattern).add("type", type).add("sync", settings.sync),
          access.access, settings);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "hpio", benchmark); }
