// bench/ncio: the NCIO study's four access cases (c-c, nc-c, c-nc, nc-nc:
// memory, then file, contiguous or not), written and read collectively with
// flowio and with MPICH's MPI-IO in the same run. bench/regions.h describes
// the layout; the noncontiguous parts are vectors, as in the study.
//
// Usage: mpiexec -n N bazel-bin/bench/ncio [--case=all|c-c|nc-c|c-nc|nc-nc]
//   [--regions=4096] [--region_size=8] [--spacing=128] [--sync=0|1]
//   [--op=both|write|read] [--sweep=none|regions|size|spacing] [--reps=5]
//   [--dir=$TMPDIR] [--datarep=native|external32] [--element=byte|double]
//
// --datarep sets both sides' views in that data representation and adds
// flowio in native, timed in the same run ("vs_native"); the regions are
// then made of doubles (--element) unless said otherwise.
//
// --sync=1 syncs after every write, inside the timing, as the study did.
// --sweep replaces one parameter by the study's range of it (other
// parameters as given) and runs every point. Reads follow the writes and
// so come mostly from the page cache.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/regions.h"

namespace {

using bench::RegionPattern;

std::vector<std::int64_t> powers_of_two(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> values;
  for (std::int64_t value = from; value <= to; value *= 2) values.push_back(value);
  return values;
}

// The points of `sweep` for one case, `base` supplying the fixed parameters.
std::vector<RegionPattern> sweep_points(const std::string& sweep, const RegionPattern& base) {
  if (sweep == "none") return {base};
  std::vector<RegionPattern> points;
  const std::vector<std::int64_t> values =
      sweep == "regions" ? std::vector<std::int64_t>{2048, 8192, 32768, 131072, 262144}
                         : powers_of_two(8, 4096);
  for (const std::int64_t value : values) {
    RegionPattern point = base;
    if (sweep == "regions") {
      point.regions = value;
    } else if (sweep == "size") {
      point.region_size = value;
    } else {
      point.spacing = value;
    }
    points.push_back(point);
  }
  return points;
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::AccessSettings settings = bench::access_settings(options);
  std::vector<std::string> cases = bench::region_cases();
  const std::string chosen =
      options.choice("case", "all", {"all", "c-c", "nc-c", "c-nc", "nc-nc"},
                     "access case (memory, then file; c contiguous, nc not); all: every one");
  if (chosen != "all") cases = {chosen};
  // Converting bytes costs nothing: a datarep is measured on doubles.
  RegionPattern pattern_defaults;
  pattern_defaults.element = settings.datarep == "native" ? "byte" : "double";
  RegionPattern base = bench::region_options(options, pattern_defaults);
  const std::string sweep = options.choice(
      "sweep", "none", {"none", "regions", "size", "spacing"},
      "parameter replaced by the study's range (regions 2048 to 262144; size or spacing 8 to "
      "4096 bytes, doubling); none: the one point given");
  options.finish();

  for (const std::string& name : cases) {
    base.name = name;
    for (const RegionPattern& point : sweep_points(sweep, base)) {
      const bench::RegionAccess access =
          bench::make_region_access(point, bench::Description::compact);
      bench::compare_access(report,
                            bench::region_fields(point)
                                .add("sync", settings.sync)
                                .add("sweep", sweep)
                                .add("datarep", settings.datarep),
                            access.access, settings);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "ncio", benchmark); }
