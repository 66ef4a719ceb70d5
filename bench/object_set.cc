// bench/object_set: what an object set costs. P processes (the job's
// ranks, at least 2 views) have overlapping strided views, each a vector
// type (one flattened node whatever its count): process r covers 24 bytes
// at r * 16 of every 64-byte period, so neighbours overlap by 8 bytes and
// each period holds about 8 objects, shared and private. The period count
// is chosen for --objects objects (default 10^6, also 10^4 and 10^5 with
// --sweep=1). Measured, medians of --reps:
//   build     sync::ObjectSet from the P accesses (the merge of their piece
//             streams and the balanced interval tree), on one process, in
//             elapsed and in CPU seconds (the machine is shared);
//   gather    flowio::ObjectSet::gather on the job's ranks: the flattened
//             views exchanged, then the same build on every rank;
//   query     one overlap query of a random 4 KiB range (median of 10^5);
//   touches   touches_shared for one process's access of 64 of its pieces
//             (what atomic mode would ask before an access);
// the set's memory (its own accounting, and the growth of the peak
// resident set while building) and the words of one view on the wire.
// MPICH's MPI-IO has no object sets, so there is no baseline: the point is
// that 10^6 objects build in well under a second in tens of megabytes.
//
// Usage: mpiexec -n 4 bazel-bin/bench/object_set [--objects=1000000]
//   [--sweep=0|1] [--reps=5]
#include <mpi.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "bench/bench_support.h"
#include "exchange/access_codec.h"
#include "flowio/error.h"
#include "flowio/object_set.h"
#include "runtime/core/access.h"
#include "runtime/core/file_view.h"
#include "sync/object_set.h"

namespace {

using bench::Fields;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kPeriod = 64, kShift = 16, kLength = 24;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds this thread has run: on a loaded machine, what the work
// costs apart from the waits for a core.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

// Process r's filetype: kLength bytes every kPeriod, `periods` times.
bench::Datatype strided(std::int64_t periods) {
  MPI_Datatype type;
  flowio::check_mpi(MPI_Type_vector(static_cast<int>(periods), static_cast<int>(kLength),
                                    static_cast<int>(kPeriod), MPI_BYTE, &type),
                    "MPI_Type_vector");
  return bench::Datatype(type);
}

void measure(bench::Report& report, int processes, std::int64_t objects_wanted, int reps) {
  // About 2 * processes boundaries per period when the views wrap.
  const std::int64_t periods = std::max<std::int64_t>(1, objects_wanted / (2 * processes));
  const std::int64_t range_end = periods * kPeriod + processes * kShift + kLength;
  const bench::Datatype filetype = strided(periods);
  std::vector<flowio::core::Access> accesses;
  for (int r = 0; r < processes; ++r) {
    auto view =
        std::make_shared<const flowio::core::FileView>(r * kShift, MPI_BYTE, filetype.get());
    // The view over the range, as ObjectSet::gather takes it.
    accesses.emplace_back(view, 0, view->stream_bytes_before(range_end));
  }

  std::vector<double> build_s, build_cpu_s, gather_s;
  std::unique_ptr<flowio::sync::ObjectSet> set;
  const std::int64_t rss_before = peak_rss_bytes();
  for (int rep = 0; rep < reps; ++rep) {
    set.reset();
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_seconds();
    set = std::make_unique<flowio::sync::ObjectSet>(accesses, 0, range_end);
    build_cpu_s.push_back(thread_cpu_seconds() - cpu_start);
    build_s.push_back(seconds_since(start));
  }
  const std::int64_t rss_growth = peak_rss_bytes() - rss_before;

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::size_t gathered_objects = 0;
  for (int rep = 0; rep < reps && ranks == processes; ++rep) {
    gather_s.push_back(bench::time_collective([&] {
      gathered_objects = flowio::ObjectSet::gather(MPI_COMM_WORLD, rank * kShift, MPI_BYTE,
                                                   filetype.get(), 0, range_end)
                             .size();
    }));
  }
  bench::verify(ranks != processes || gathered_objects == set->object_count(),
                "the gathered set differs from the one built locally");

  std::mt19937_64 rng(7);
  std::vector<double> query_s;
  std::size_t found = 0;
  for (int q = 0; q < 100000; ++q) {
    const std::int64_t begin =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range_end));
    const auto start = Clock::now();
    set->for_each_overlapping(begin, begin + 4096, [&](flowio::sync::ObjectSet::ObjectId) {
      ++found;
      return true;
    });
    query_s.push_back(seconds_since(start));
  }
  std::vector<double> touches_s;
  bool all_touch = true;
  for (int q = 0; q < 10000; ++q) {
    const std::int64_t first = static_cast<std::int64_t>(
        rng() % static_cast<std::uint64_t>(std::max<std::int64_t>(1, periods - 64)));
    const flowio::core::Access mine(accesses[0].view(), first * kLength, (first + 64) * kLength);
    const auto start = Clock::now();
    const bool shared = set->touches_shared(mine);
    touches_s.push_back(seconds_since(start));
    all_touch = all_touch && shared;
  }
  bench::verify(all_touch, "a strided access with overlapping neighbours touches shared objects");
  std::size_t shared = 0;
  for (flowio::sync::ObjectSet::ObjectId id = 0; id < set->object_count(); ++id) {
    if (set->shared(id)) ++shared;
  }
  report.line(
      Fields()
          .add("processes", processes)
          .add("objects", static_cast<std::int64_t>(set->object_count()))
          .add("shared", static_cast<std::int64_t>(shared))
          .add("build_s", bench::median(build_s))
          .add("build_cpu_s", bench::median(build_cpu_s))
          .add("gather_s", gather_s.empty() ? 0.0 : bench::median(gather_s))
          .add("MiB", set->memory_bytes() / 1048576.0)
          .add("bytes_per_object",
               static_cast<double>(set->memory_bytes()) / static_cast<double>(set->object_count()))
          .add("rss_growth_MiB", rss_growth / 1048576.0)
          .add("query_us", bench::median(query_s) * 1e6)
          .add("avg_answers", static_cast<double>(found) / 100000.0)
          .add("touches_us", bench::median(touches_s) * 1e6)
          .add("view_words", static_cast<std::int64_t>(
                                 flowio::exchange::encode_view_access(accesses[0]).size())));
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::int64_t objects =
      options.integer("objects", 1000000,
                      "about how many objects the set holds (the views' length is chosen for it)");
  const bool sweep =
      options.choice("sweep", "0", {"0", "1"},
                     "1: also 10^4 and 10^5 objects first; 0: --objects only") == "1";
  options.finish();
  if (objects < 1) throw std::invalid_argument("--objects must be positive");
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int processes = std::max(2, ranks);
  if (sweep) {
    for (const std::int64_t n : {10000, 100000}) {
      measure(report, processes, n, common.reps);
    }
  }
  measure(report, processes, objects, common.reps);
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_benchmark(argc, argv, "object_set", benchmark);
}
