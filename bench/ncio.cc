// bench/ncio: the NCIO study's four access cases (c-c, nc-c, c-nc, nc-nc:
// memory, then file, contiguous or not), written and read collectively with
// flowio and with MPICH's MPI-IO in the same run. bench/regions.h describes
// the layout; the noncontiguous parts are vectors, as in the study.
//
// Usage: mpiexec -n N bazel-bin/bench/ncio [--case=all|c-c|nc-c|c-nc|nc-nc]
//   [--regions=4096] [--region_size=8] [--spacing=128] [--sync=0|1]
//   [--op=both|write|read] [--reps=5] [--dir=$TMPDIR]
//   [--sweep=none|regions|size|spacing|grid|study] [--counts=64,512,...]
//   [--sizes=8,64,...] [--spacings=0,8,...] [--max_rank_mib=256]
//   [--datarep=native|external32] [--element=byte|double]
//
// --datarep sets both sides' views in that data representation and adds
// flowio in native, timed in the same run ("vs_native"); the regions are
// then made of doubles (--element) unless said otherwise.
//
// --sync=1 syncs after every write, inside the timing, as the study did.
// --sweep replaces parameters by the study's ranges of them, the others as
// given: regions by --counts, size by --sizes, spacing by --spacings; grid
// runs every --sizes x --counts pair at --spacing (the page's heat maps);
// study runs the grid, then the spacing line. Each line says which sweep it
// belongs to (sweep=grid or sweep=spacing in a study). A point whose data
// per rank (regions x region_size) is above --max_rank_mib is not run: its
// line says skipped=above_max_rank_mib instead of times. Reads follow the
// writes and so come mostly from the page cache.
//
// Each measured point prints per op a flowio and an MPICH line (MiBps and
// seconds of the median repetition, seconds_min, seconds_max) and a line
// with ratio (MPICH's median seconds over flowio's: above 1, flowio is
// faster), ratio_min and ratio_max (the extremes of the repetitions' own
// ratios, each of one flowio and the MPICH repetition that followed it).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/regions.h"

namespace {

using bench::RegionPattern;

// One point of a sweep: the pattern and the name of the sweep it belongs to.
struct SweepPoint {
  std::string sweep;
  RegionPattern pattern;
};

// The values the sweeps take, from the options.
struct SweepRanges {
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> spacings;
};

// The points of `sweep` for one case, `base` supplying the fixed parameters.
std::vector<SweepPoint> sweep_points(const std::string& sweep, const SweepRanges& ranges,
                                     const RegionPattern& base) {
  if (sweep == "none") return {{sweep, base}};
  std::vector<SweepPoint> points;
  if (sweep == "grid" || sweep == "study") {
    for (const std::int64_t size : ranges.sizes) {
      for (const std::int64_t count : ranges.counts) {
        RegionPattern point = base;
        point.region_size = size;
        point.regions = count;
        points.push_back({"grid", point});
      }
    }
  }
  if (sweep == "regions" || sweep == "size" || sweep == "spacing" || sweep == "study") {
    const std::string line = sweep == "study" ? "spacing" : sweep;
    std::int64_t RegionPattern::*const swept = line == "regions" ? &RegionPattern::regions
                                               : line == "size"  ? &RegionPattern::region_size
                                                                 : &RegionPattern::spacing;
    const std::vector<std::int64_t>& values = line == "regions" ? ranges.counts
                                              : line == "size"  ? ranges.sizes
                                                                : ranges.spacings;
    for (const std::int64_t value : values) {
      RegionPattern point = base;
      point.*swept = value;
      points.push_back({line, point});
    }
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
      "sweep", "none", {"none", "regions", "size", "spacing", "grid", "study"},
      "parameters replaced by the study's ranges: regions by --counts, size by --sizes, spacing "
      "by --spacings; grid: every --sizes x --counts pair at --spacing; study: the grid, then "
      "the spacing line; none: the one point given");
  // Powers of 8 (and 1 MiB, the top of the study's sizes), so that the
  // grid stays small enough to run in minutes and still spans the range.
  const SweepRanges ranges{
      options.integers("counts", "64,512,4096,32768,262144",
                       "regions per rank the regions and grid sweeps take"),
      options.integers("sizes", "8,64,512,4096,32768,262144,1048576",
                       "region sizes in bytes the size and grid sweeps take"),
      options.integers("spacings", "0,8,32,128,512,2048,8192,32768,65536",
                       "region spacings in bytes the spacing sweep takes"),
  };
  const std::int64_t max_rank_mib = options.integer(
      "max_rank_mib", 256,
      "points whose data per rank (regions x region_size) is above this many MiB are skipped, "
      "with a line that says so");
  options.finish();
  if (max_rank_mib < 1) throw std::invalid_argument("--max_rank_mib must be at least 1");

  for (const std::string& name : cases) {
    base.name = name;
    for (const SweepPoint& point : sweep_points(sweep, ranges, base)) {
      const bench::Fields fields = bench::region_fields(point.pattern)
                                       .add("sync", settings.sync)
                                       .add("sweep", point.sweep)
                                       .add("datarep", settings.datarep);
      const std::int64_t rank_bytes = point.pattern.regions * point.pattern.region_size;
      if (rank_bytes > max_rank_mib * 1024 * 1024) {
        report.line(bench::Fields(fields)
                        .add("rank_mib", rank_bytes / (1024 * 1024))
                        .add("skipped", "above_max_rank_mib"));
        continue;
      }
      const bench::RegionAccess access =
          bench::make_region_access(point.pattern, bench::Description::compact);
      bench::compare_access(report, fields, access.access, settings);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "ncio", benchmark); }
