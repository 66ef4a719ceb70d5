// bench/locks: the seed paper's lock benchmarks (Ross et al., "Implementing
// MPI-IO Atomic Mode Without File System Support", section 3) for flowio's
// locks (sync/), with fcntl locks (what MPICH's MPI-IO takes in atomic
// mode) side by side, and atomic-mode write throughput against MPICH's.
//
//   --test=latency     uncontended lock + unlock: rank 1 locks and unlocks
//                      in a loop, the lock's home (its shared words) on
//                      rank 0, which only sleeps meanwhile. Per lock, the
//                      median over --reps of the mean of --latency_iterations.
//   --test=contended   every rank: --iterations times lock, busy work of
//                      each --work_ms, unlock. T the elapsed time of the
//                      slowest rank, W the time all ranks spent working
//                      (measured: n * iterations * Tw plus what the work
//                      overran on a loaded node): the overhead O = T - W
//                      and the paper's percent overhead 100 * O / (O + W).
//   --test=cpu         CPU a waiting rank burns: rank 0 holds the lock for
//                      --hold_ms, the others wait for it; each rank's CPU
//                      time (getrusage: all its threads) over the wait, as
//                      a share of one core. Rank 0 is the lock's home.
//   --test=throughput  atomic-mode writes: every rank writes --mib MiB in
//                      1 MiB write_at calls to its own region (disjoint) or
//                      to a region overlapping the next rank's by half
//                      (overlapping); flowio with atomic mode off, with
//                      range locks, with whole-file locks, and MPICH's
//                      MPI-IO with atomic mode off and on; repetitions
//                      interleaved, medians (of the slowest rank's time,
//                      and of the CPU time of the rank that used the most,
//                      all its threads: cpu_s). --view=strided writes each
//                      region through a vector view (1 KiB blocks, 1 KiB
//                      holes: noncontiguous in the file). --regions=tiled
//                      (the default) gives each rank a view that holds its
//                      region only (the filetype's extent is P regions, as
//                      an application that owns its region declares it),
//                      so atomic mode's object set finds the disjoint
//                      regions private; --regions=open starts each view at
//                      its region and lets it run to the end of the file
//                      (every view holds the later ranks' regions: all
//                      shared). --regions=interleaved is the usual
//                      noncontiguous checkpoint: the ranks' 1 KiB blocks
//                      take turns through one extent (rank r's block k at
//                      (k * P + r) KiB; overlapping: 2 KiB blocks, each
//                      covering half of the next rank's), so every rank's
//                      extent holds every other rank's bytes: a lock over
//                      an access's extent (MPICH's fcntl lock in atomic
//                      mode) serializes the ranks, while the bytes of
//                      disjoint views never meet. --view does not apply.
//                      --call=collective makes every write a write_at_all
//                      (the same calls on every rank) instead of write_at.
//   --test=all         all four (latency needs 2 ranks or more).
// --locks=hybrid,one_sided,mcs,fcntl chooses the algorithms (each tried
// whole-file and with ranges where the test cares).
//
// Usage: mpiexec -n N bazel-bin/bench/locks [--test=all] [--reps=5]
//   [--locks=...] [--latency_iterations=1000] [--iterations=100]
//   [--work_ms=0,1,10,100] [--hold_ms=2000] [--mib=64]
//   [--view=contiguous|strided] [--regions=tiled|open|interleaved]
//   [--call=independent|collective] [--hints=key=value,...]
//   [--dir=$TMPDIR]   (--hints: flowio hints for every flowio configuration)
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/lock_progress.h"
#include "sync/lock.h"
#include "sync/lock_settings.h"
#include "tests/support/world.h"

namespace {

using flowio::check_mpi;
using flowio::sync::LockAlgorithm;
using flowio::sync::LockSettings;

using flowio::testing::world_rank;
using flowio::testing::world_size;

std::string lock_name(const LockSettings& settings) {
  return std::string(flowio::sync::lock_algorithm_name(settings.algorithm)) +
         (settings.ranges ? "+ranges" : "");
}

// Seconds of CPU this process used so far, all threads.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// Busy work for `seconds` (the lock holder's "I/O"); returns the seconds
// it really took (on a loaded node the thread may lose the core inside).
double busy(double seconds) {
  const double start = MPI_Wtime();
  volatile double x = 1.0;
  while (MPI_Wtime() - start < seconds) {
    for (int i = 0; i < 100; ++i) x = x * 1.0000001 + 1e-9;
  }
  return MPI_Wtime() - start;
}

// Waits for every rank without keeping MPI busy on this thread: MPICH's
// blocking calls poll, which would serve a lock's home from the main
// thread and hide what its progress thread costs.
void quiet_barrier() {
  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &barrier), "MPI_Ibarrier");
  for (int done = 0; !done;) {
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// What every lock test needs: the engine whose progress thread waits.
struct Locks {
  std::shared_ptr<flowio::runtime::Engine> engine = flowio::runtime::Engine::acquire();
  flowio::runtime::LockProgress port{engine->progress()};
  std::string path;

  std::unique_ptr<flowio::sync::Lock> make(LockSettings settings) {
    return flowio::sync::make_lock(settings, MPI_COMM_WORLD, path, port);
  }
};

std::vector<LockSettings> lock_kinds(const std::vector<std::string>& algorithms, bool with_ranges) {
  std::vector<LockSettings> kinds;
  for (const std::string& name : algorithms) {
    for (const bool ranges : {false, true}) {
      if (ranges && !with_ranges) continue;
      kinds.push_back(LockSettings::from_hints(
          {{"flowio_lock", name}, {"flowio_lock_ranges", ranges ? "enable" : "disable"}}));
    }
  }
  return kinds;
}

void latency(bench::Report& report, Locks& locks, const std::vector<LockSettings>& kinds, int reps,
             int iterations) {
  if (world_size() < 2) {
    report.note("latency needs 2 ranks or more (the home on rank 0, the locker on rank 1)");
    return;
  }
  for (const LockSettings& kind : kinds) {
    std::unique_ptr<flowio::sync::Lock> lock = locks.make(kind);
    std::vector<double> per_pair;
    for (int rep = 0; rep < reps; ++rep) {
      quiet_barrier();
      double seconds = 0;
      if (world_rank() == 1) {
        for (int i = 0; i < 10; ++i) lock->acquire({0, 8}, flowio::sync::LockMode::exclusive).get();
        const double start = MPI_Wtime();
        for (int i = 0; i < iterations; ++i) {
          lock->acquire({0, 8}, flowio::sync::LockMode::exclusive).get();
        }
        seconds = (MPI_Wtime() - start) / iterations;
      }
      MPI_Bcast(&seconds, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
      per_pair.push_back(seconds);
    }
    quiet_barrier();
    lock->close();
    report.line(bench::Fields()
                    .add("test", "latency")
                    .add("lock", lock_name(kind))
                    .add("us", 1e6 * bench::median(per_pair))
                    .add("us_min", 1e6 * *std::min_element(per_pair.begin(), per_pair.end())));
  }
}

void contended(bench::Report& report, Locks& locks, const std::vector<LockSettings>& kinds,
               int iterations, const std::vector<std::string>& work_ms) {
  const int ranks = world_size();
  for (const std::string& work_text : work_ms) {
    const double work = std::stod(work_text) * 1e-3;
    for (const LockSettings& kind : kinds) {
      std::unique_ptr<flowio::sync::Lock> lock = locks.make(kind);
      double worked = 0;
      const double elapsed = bench::time_collective([&] {
        for (int i = 0; i < iterations; ++i) {
          flowio::sync::Lease lease =
              lock->acquire({0, 8}, flowio::sync::LockMode::exclusive).get();
          if (work > 0) worked += busy(work);
        }
      });
      lock->close();
      // The paper subtracts the time processes actually spent working;
      // the work's own overrun (preemption on a loaded node) is work, not
      // the lock's overhead.
      double working = 0;
      MPI_Allreduce(&worked, &working, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      const double overhead = elapsed - working;
      report.line(bench::Fields()
                      .add("test", "contended")
                      .add("lock", lock_name(kind))
                      .add("work_ms", work_text)
                      .add("iterations", iterations)
                      .add("seconds", elapsed)
                      .add("overhead_ms", 1e3 * overhead)
                      .add("overhead_per_lock_us", 1e6 * overhead / (ranks * iterations))
                      .add("percent_overhead", 100.0 * overhead / (overhead + working)));
    }
  }
}

void cpu(bench::Report& report, Locks& locks, const std::vector<LockSettings>& kinds,
         double hold_seconds) {
  if (world_size() < 2) {
    report.note("cpu needs 2 ranks or more (rank 0 holds, the others wait)");
    return;
  }
  for (const LockSettings& kind : kinds) {
    std::unique_ptr<flowio::sync::Lock> lock = locks.make(kind);
    flowio::sync::Lease held;
    if (world_rank() == 0) held = lock->acquire({0, 8}, flowio::sync::LockMode::exclusive).get();
    quiet_barrier();
    const double wall_start = MPI_Wtime();
    const double cpu_start = cpu_seconds();
    if (world_rank() == 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(hold_seconds));
      held.release();
    } else {
      lock->acquire({0, 8}, flowio::sync::LockMode::exclusive).get();
    }
    const double share = (cpu_seconds() - cpu_start) / (MPI_Wtime() - wall_start);
    double waiting_worst = world_rank() == 0 ? 0 : share;
    double waiting_all = 0;
    MPI_Reduce(&waiting_worst, &waiting_all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double home = share;
    MPI_Bcast(&home, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    quiet_barrier();
    lock->close();
    report.line(bench::Fields()
                    .add("test", "cpu")
                    .add("lock", lock_name(kind))
                    .add("hold_s", hold_seconds)
                    .add("waiter_core_percent", 100.0 * waiting_all)
                    .add("holder_home_core_percent", 100.0 * home));
  }
}

// How the ranks' regions lie in the file (--regions).
enum class Regions { tiled, open, interleaved };

// Rank r's region, in bytes of file: disjoint, or overlapping the next
// rank's by half. A strided view spreads each byte of data over two of
// file (1 KiB blocks, 1 KiB holes); an interleaved one over P.
constexpr std::int64_t kStridedBlock = 1024;

MPI_Offset region_start(Regions regions, bool overlapping, std::int64_t extent) {
  if (regions == Regions::interleaved) return static_cast<MPI_Offset>(world_rank()) * kStridedBlock;
  return static_cast<MPI_Offset>(world_rank()) * (overlapping ? extent / 2 : extent);
}

// The filetype of a rank's view of `bytes` of data. Tiled and open: its
// region's bytes (all of them, or 1 KiB blocks with 1 KiB holes),
// repeating every `region_extent` (open: the view runs on through the
// later regions) or every `tile_extent` (tiled: the view holds its region
// only, and the same place in every later row of regions). Interleaved:
// blocks of 1 KiB (2 KiB when overlapping) every P KiB.
MPI_Datatype region_filetype(Regions regions, bool strided, bool overlapping, std::int64_t bytes,
                             std::int64_t region_extent, std::int64_t tile_extent) {
  MPI_Datatype data = MPI_DATATYPE_NULL, filetype = MPI_DATATYPE_NULL;
  std::int64_t extent = regions == Regions::tiled ? tile_extent : region_extent;
  if (regions == Regions::interleaved) {
    const std::int64_t block = overlapping ? 2 * kStridedBlock : kStridedBlock;
    const std::int64_t stride = std::max(world_size(), 2) * kStridedBlock;
    MPI_Type_vector(static_cast<int>(bytes / block), static_cast<int>(block),
                    static_cast<int>(stride), MPI_BYTE, &data);
    extent = bytes / block * stride;
  } else if (strided) {
    MPI_Type_vector(static_cast<int>(bytes / kStridedBlock), static_cast<int>(kStridedBlock),
                    static_cast<int>(2 * kStridedBlock), MPI_BYTE, &data);
  } else {
    MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &data);
  }
  MPI_Type_create_resized(data, 0, extent, &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_free(&data);
  return filetype;
}

void throughput(bench::Report& report, const std::string& dir, int reps, std::int64_t mib,
                bool strided, Regions regions, bool collective,
                const std::vector<LockSettings>& kinds, const flowio::Hints& extra_hints) {
  constexpr std::int64_t kChunk = 1 << 20;
  const std::int64_t bytes = mib * kChunk;
  const std::int64_t extent = strided ? 2 * bytes : bytes;
  std::vector<char> data(static_cast<std::size_t>(kChunk), static_cast<char>('a' + world_rank()));
  for (const bool overlapping : {false, true}) {
    const std::string pattern =
        std::string(overlapping ? "overlapping" : "disjoint") +
        (regions == Regions::interleaved
             ? "_interleaved"
             : std::string(strided ? "_strided" : "") + (regions == Regions::open ? "_open" : ""));
    // Tiled: regions repeat every P regions (every P half-regions when
    // they overlap by half, at least one region: a view may not overlap
    // itself).
    MPI_Datatype filetype = region_filetype(
        regions, strided, overlapping, bytes, extent,
        overlapping ? extent / 2 * std::max(world_size(), 2) : extent * world_size());
    // One configuration: a name and a timed write of this rank's region.
    struct Configuration {
      std::string name;
      std::function<double()> write;
    };
    // The CPU time (all threads of the process) the last timed write took
    // on the rank that took the most: on a loaded machine it tells the
    // cost of the writes apart from the time spent waiting for a core.
    double last_cpu = 0;
    auto timed = [&last_cpu](const std::function<void()>& writes) {
      const double cpu_start = cpu_seconds();
      const double seconds = bench::time_collective(writes);
      const double mine = cpu_seconds() - cpu_start;
      check_mpi(MPI_Allreduce(&mine, &last_cpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                "MPI_Allreduce");
      return seconds;
    };
    bench::ScratchFile flowio_path(dir, "locks_flowio");
    bench::ScratchFile mpich_path(dir, "locks_mpich");
    std::vector<Configuration> configurations;
    auto flowio_write = [&, overlapping](flowio::Hints hints, bool atomic) {
      return [&, hints, atomic, overlapping] {
        flowio::File file = flowio::File::open(MPI_COMM_WORLD, flowio_path.path(),
                                               flowio::Mode::create | flowio::Mode::rdwr, hints);
        file.set_view(region_start(regions, overlapping, extent), MPI_BYTE, filetype);
        file.set_atomicity(atomic);
        const double seconds = timed([&] {
          for (std::int64_t at = 0; at < bytes; at += kChunk) {
            if (collective) {
              file.write_at_all(at, data.data(), kChunk, MPI_BYTE);
            } else {
              file.write_at(at, data.data(), kChunk, MPI_BYTE);
            }
          }
        });
        file.close();
        return seconds;
      };
    };
    auto mpich_write = [&, overlapping](bool atomic) {
      return [&, atomic, overlapping] {
        bench::MpiFile file(mpich_path.path(), {});
        check_mpi(MPI_File_set_view(file.get(), region_start(regions, overlapping, extent),
                                    MPI_BYTE, filetype, "native", MPI_INFO_NULL),
                  "MPI_File_set_view");
        check_mpi(MPI_File_set_atomicity(file.get(), atomic ? 1 : 0), "MPI_File_set_atomicity");
        const double seconds = timed([&] {
          for (std::int64_t at = 0; at < bytes; at += kChunk) {
            check_mpi(collective ? MPI_File_write_at_all(file.get(), at, data.data(), kChunk,
                                                         MPI_BYTE, MPI_STATUS_IGNORE)
                                 : MPI_File_write_at(file.get(), at, data.data(), kChunk, MPI_BYTE,
                                                     MPI_STATUS_IGNORE),
                      "MPI_File_write_at(_all)");
          }
        });
        file.close();
        return seconds;
      };
    };
    configurations.push_back({"flowio_atomic_off", flowio_write(extra_hints, false)});
    for (const LockSettings& kind : kinds) {
      flowio::Hints hints = extra_hints;
      kind.describe(hints);
      configurations.push_back({"flowio_" + lock_name(kind), flowio_write(hints, true)});
    }
    configurations.push_back({"mpich_atomic_off", mpich_write(false)});
    configurations.push_back({"mpich_atomic", mpich_write(true)});
    std::vector<std::vector<double>> seconds(configurations.size());
    std::vector<std::vector<double>> cpu(configurations.size());
    for (int rep = 0; rep < reps; ++rep) {
      for (std::size_t c = 0; c < configurations.size(); ++c) {
        seconds[c].push_back(configurations[c].write());
        cpu[c].push_back(last_cpu);
      }
    }
    const double mpich_atomic_cpu = bench::median(cpu.back());
    const double flowio_off = bench::median(seconds[0]);
    const double mpich_atomic = bench::median(seconds.back());
    for (std::size_t c = 0; c < configurations.size(); ++c) {
      const double median = bench::median(seconds[c]);
      report.line(bench::Fields()
                      .add("test", "throughput")
                      .add("pattern", pattern)
                      .add("ranks", world_size())
                      .add("config", configurations[c].name)
                      .add("seconds", median)
                      .add("MiBps", static_cast<double>(world_size()) * mib / median)
                      .add("vs_flowio_off", median / flowio_off)
                      .add("speedup_vs_mpich_atomic", mpich_atomic / median)
                      .add("cpu_s", bench::median(cpu[c]))
                      .add("cpu_vs_mpich_atomic", bench::median(cpu[c]) / mpich_atomic_cpu));
    }
    MPI_Type_free(&filetype);
  }
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::string test =
      options.choice("test", "all", {"all", "latency", "contended", "cpu", "throughput"},
                     "test run: latency (uncontended lock + unlock; 2 ranks or more), contended, "
                     "cpu (what a waiting rank burns), throughput (atomic-mode writes); all: "
                     "every one");
  const std::vector<std::string> algorithms = options.list(
      "locks", "hybrid,one_sided,mcs,fcntl",
      "lock algorithms (the hint flowio_lock) of the latency, contended and cpu tests");
  const int latency_iterations = static_cast<int>(options.integer(
      "latency_iterations", 1000, "lock + unlock pairs per repetition of the latency test"));
  const int iterations = static_cast<int>(
      options.integer("iterations", 100, "locks each rank takes in the contended test"));
  const std::vector<std::string> work_ms = options.list(
      "work_ms", "0,1,10,100",
      "busy work while holding the lock in the contended test, in ms (fractions allowed), one "
      "point each");
  const double hold_seconds =
      static_cast<double>(options.integer(
          "hold_ms", 2000, "ms rank 0 holds the lock in the cpu test while the others wait")) *
      1e-3;
  const std::int64_t mib =
      options.integer("mib", 64, "MiB each rank writes in the throughput test, in 1 MiB calls");
  const bool strided =
      options.choice("view", "contiguous", {"contiguous", "strided"},
                     "throughput test: each region written through a contiguous view, or a "
                     "strided one (1 KiB blocks, 1 KiB holes); ignored with "
                     "--regions=interleaved") == "strided";
  const std::string region_choice =
      options.choice("regions", "tiled", {"tiled", "open", "interleaved"},
                     "throughput test: tiled (each view holds its rank's region only), open (its "
                     "region to the end of the file), interleaved (1 KiB blocks of the ranks in "
                     "turn)");
  const Regions regions = region_choice == "tiled"  ? Regions::tiled
                          : region_choice == "open" ? Regions::open
                                                    : Regions::interleaved;
  const bool collective =
      options.choice("call", "independent", {"independent", "collective"},
                     "throughput test: independent write_at, or collective write_at_all") ==
      "collective";
  flowio::Hints extra_hints;
  for (const std::string& hint : options.list(
           "hints", "",
           "flowio hints key=value,... added to every flowio configuration of the throughput "
           "test")) {
    const std::size_t equals = hint.find('=');
    if (equals == std::string::npos)
      throw flowio::UsageError(flowio::ErrorCode::invalid_argument, "--hints: key=value,...");
    extra_hints[hint.substr(0, equals)] = hint.substr(equals + 1);
  }
  options.finish();

  bench::ScratchFile lock_file(common.dir, "locks_fcntl");
  if (world_rank() == 0) std::fclose(std::fopen(lock_file.path().c_str(), "a"));
  MPI_Barrier(MPI_COMM_WORLD);
  Locks locks;
  locks.path = lock_file.path();
  report.note("fcntl is the lock MPICH's MPI-IO takes in atomic mode (its baseline here)");
  if (test == "all" || test == "latency") {
    latency(report, locks, lock_kinds(algorithms, true), common.reps, latency_iterations);
  }
  if (test == "all" || test == "cpu") {
    cpu(report, locks, lock_kinds(algorithms, false), hold_seconds);
  }
  if (test == "all" || test == "contended") {
    contended(report, locks, lock_kinds(algorithms, false), iterations, work_ms);
  }
  if (test == "all" || test == "throughput") {
    const std::vector<LockSettings> kinds = {
        LockSettings::from_hints({}),
        LockSettings::from_hints({{"flowio_lock_ranges", "disable"}}),
        LockSettings::from_hints({{"flowio_lock", "mcs"}}),
        LockSettings::from_hints({{"flowio_lock", "fcntl"}}),
    };
    throughput(report, common.dir, common.reps, mib, strided, regions, collective, kinds,
               extra_hints);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "locks", benchmark); }
