// bench/repeat: the same collective call made again and again on one open
// file, as a time-stepping code does every step. For each of the NCIO
// cases c-c, nc-c and c-nc (bench/regions.h) and each size per rank, it
// times --calls write_at_all (then read_at_all) calls in a row through
// flowio with the plan cache (the default: from the second call on, the
// compiled plan is rerun), through flowio without it (flowio_plan_cache=0:
// every call compiles its plan), and through MPICH's MPI-IO, rounds of the
// three interleaved, and reports the median microseconds per call of each
// and the ratio MPICH / flowio (above 1: flowio faster per call).
// Each round's figure is its mean per call, which on a loaded machine is
// mostly the calls during which a process was preempted; so a last round
// of each times every call alone and reports the median call (the slowest
// rank's), the cost of a call that was not interrupted (*_median_call_us,
// ratio_median_call).
//
// Usage: mpiexec -n N bazel-bin/bench/repeat [--calls=1000]
//   [--sizes=32768,1048576] [--case=all|c-c|nc-c|c-nc] [--op=both|write|read]
//   [--reps=5] [--dir=$TMPDIR]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/regions.h"
#include "flowio/error.h"
#include "flowio/file.h"

namespace {

using flowio::check_mpi;

// One implementation's file with the case's view, and its repeated call.
struct Side {
  std::string name;
  std::function<void(bool writing, void* buffer)> call;
};

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::AccessSettings settings = bench::access_settings(options);
  const std::int64_t calls =
      options.integer("calls", 1000, "calls in a row per side and round, writes then reads");
  const std::vector<std::int64_t> sizes = options.integers(
      "sizes", "32768,1048576",
      "bytes each rank moves per call, one point each (rounded down to 8-byte regions)");
  std::vector<std::string> cases = {"c-c", "nc-c", "c-nc"};
  const std::string chosen =
      options.choice("case", "all", {"all", "c-c", "nc-c", "c-nc"},
                     "access case (memory, then file; c contiguous, nc not); all: every one");
  if (chosen != "all") cases = {chosen};
  options.finish();

  for (const std::string& name : cases) {
    for (const std::int64_t size : sizes) {
      const bench::RegionPattern pattern = bench::sized_region_pattern(name, size);
      const bench::RegionAccess region =
          bench::make_region_access(pattern, bench::Description::compact);
      const bench::Access& access = region.access;
      const std::vector<std::byte> data = bench::rank_data(access);
      std::vector<std::byte> buffer = data;

      const bench::ScratchFile cached_path(settings.dir, "cached.dat"),
          uncached_path(settings.dir, "uncached.dat"), mpich_path(settings.dir, "mpich.dat");
      flowio::File cached = flowio::File::open(MPI_COMM_WORLD, cached_path.path(),
                                               flowio::Mode::create | flowio::Mode::rdwr);
      flowio::File uncached = flowio::File::open(MPI_COMM_WORLD, uncached_path.path(),
                                                 flowio::Mode::create | flowio::Mode::rdwr,
                                                 {{"flowio_plan_cache", "0"}});
      for (flowio::File* file : {&cached, &uncached}) {
        file->set_view(access.displacement, MPI_BYTE, access.filetype);
      }
      bench::MpiFile mpich(mpich_path.path(), {});
      check_mpi(MPI_File_set_view(mpich.get(), access.displacement, MPI_BYTE, access.filetype,
                                  "native", MPI_INFO_NULL),
                "MPI_File_set_view");
      const auto flowio_call = [&](flowio::File& file) {
        return [&file, &access](bool writing, void* target) {
          if (writing) {
            file.write_at_all(0, target, access.count, access.memtype);
          } else {
            file.read_at_all(0, target, access.count, access.memtype);
          }
        };
      };
      const std::vector<Side> sides = {
          {"flowio_cached", flowio_call(cached)},
          {"flowio_uncached", flowio_call(uncached)},
          {"mpich",
           [&](bool writing, void* target) {
             check_mpi(writing ? MPI_File_write_at_all_c(mpich.get(), 0, target, access.count,
                                                         access.memtype, MPI_STATUS_IGNORE)
                               : MPI_File_read_at_all_c(mpich.get(), 0, target, access.count,
                                                        access.memtype, MPI_STATUS_IGNORE),
                       "MPICH collective call");
           }},
      };
      for (const bool writing : {true, false}) {
        if ((writing && !settings.write) || (!writing && !settings.read)) continue;
        // Untimed once each: file creation, first-touch page faults,
        // and the first compilation of the cached plan.
        for (const Side& side : sides) side.call(true, buffer.data());
        std::vector<std::vector<double>> per_call(sides.size());
        for (int rep = 0; rep < settings.reps; ++rep) {
          for (std::size_t s = 0; s < sides.size(); ++s) {
            const double seconds = bench::time_collective([&] {
              for (std::int64_t c = 0; c < calls; ++c) sides[s].call(writing, buffer.data());
            });
            per_call[s].push_back(seconds / static_cast<double>(calls) * 1e6);
          }
        }
        // Every call timed alone: the median call of each rank, the
        // slowest rank's reported.
        std::vector<double> median_call(sides.size());
        std::vector<double> call_us(static_cast<std::size_t>(calls));
        for (std::size_t s = 0; s < sides.size(); ++s) {
          MPI_Barrier(MPI_COMM_WORLD);
          for (std::int64_t c = 0; c < calls; ++c) {
            const auto begin = std::chrono::steady_clock::now();
            sides[s].call(writing, buffer.data());
            call_us[static_cast<std::size_t>(c)] =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin)
                    .count();
          }
          const double mine = bench::median(call_us);
          MPI_Allreduce(&mine, &median_call[s], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        if (!writing) {
          bench::verify(buffer == data, "repeat: a read returned other bytes than written");
        }
        const double cached_us = bench::median(per_call[0]);
        const double uncached_us = bench::median(per_call[1]);
        const double mpich_us = bench::median(per_call[2]);
        report.line(bench::region_fields(pattern)
                        .add("bytes_per_rank", size)
                        .add("op", writing ? "write" : "read")
                        .add("calls", calls)
                        .add("flowio_cached_us", cached_us)
                        .add("flowio_uncached_us", uncached_us)
                        .add("mpich_us", mpich_us)
                        .add("ratio_cached", mpich_us / cached_us)
                        .add("ratio_uncached", mpich_us / uncached_us)
                        .add("flowio_cached_median_call_us", median_call[0])
                        .add("mpich_median_call_us", median_call[2])
                        .add("ratio_median_call", median_call[2] / median_call[0]));
      }
      cached.close();
      uncached.close();
      mpich.close();
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "repeat", benchmark); }
