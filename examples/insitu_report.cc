#include "insitu_report.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>

#include "collective_timing.h"

namespace insitu {
namespace {

// The verdict as a word of the key=value lines, indexed by Verdict (the
// assertion fails to compile if a verdict is added without its word).
const char* verdict_key(Verdict verdict) {
  static constexpr const char* kKeys[] = {"flowio_faster", "mpich_faster", "no_clear_difference"};
  static_assert(std::size(kKeys) == static_cast<std::size_t>(Verdict::no_clear_difference) + 1);
  return kKeys[static_cast<int>(verdict)];
}

// "median [low, high]" in seconds.
std::string seconds_with_range(const Spread& spread) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f [%.3f, %.3f]", spread.median, spread.low, spread.high);
  return text;
}

// A checkpoint's added cost per step in words: a median at or below zero
// means the runs with checkpoints were no slower than those without.
std::string added_cost(double seconds) {
  if (seconds <= 0) return "no measurable time";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", seconds);
  return text;
}

// Each round's MPICH run over its flowio run.
std::vector<double> mpich_over_flowio(const RunsMeasurement& runs) {
  std::vector<double> ratios;
  for (std::size_t round = 0; round < runs.flowio.run.size(); ++round) {
    ratios.push_back(runs.mpich.run[round] / runs.flowio.run[round]);
  }
  return ratios;
}

// Why the checkpoints' time can (or cannot) hide behind the simulation's
// on this machine: overlap needs a resource the computation leaves free.
void print_why(const InsituReport& report) {
  const InsituOptions& options = report.options;
  const bool contiguous = report.process_grid[1] == 1 && report.process_grid[2] == 1;
  std::printf(
      "why these settings: a checkpoint hides behind computation only as far as it uses "
      "a resource the simulation leaves free.\n");
  if (report.ranks < report.cores) {
    std::printf(
        "  %d ranks on %ld cores leave %ld core(s) to flowio's progress and I/O threads, "
        "which copy and sync while the simulation computes.\n",
        report.ranks, report.cores, report.cores - report.ranks);
  } else {
    std::printf(
        "  %d ranks on %ld cores leave no core free: copying (into the page cache, "
        "between ranks) takes the cores the simulation computes on and cannot hide.\n",
        report.ranks, report.cores);
  }
  if (options.durable && report.direct_in_force && contiguous) {
    std::printf(
        "  So the checkpoint is device time instead: durable (on storage before its step ends; "
        "hint flowio_durable puts the sync inside the nonblocking write) and moved by DMA "
        "(O_DIRECT, hint flowio_direct_io) from page-aligned memory, each rank its own slab, one "
        "contiguous 4 KiB-aligned run per variable (the grid's side is a multiple of 32). The "
        "CPU copies nothing: the device writes while the cores compute.\n");
  } else if (options.durable) {
    std::printf(
        "  Checkpoints are durable, so the device's part of the sync can hide; they go "
        "through the page cache (%s), whose copying cannot.\n",
        !options.direct           ? "--direct=0"
        : !report.direct_in_force ? "the file system refused O_DIRECT"
                                  : "--decomposition=blocks: two-phase I/O gathers the "
                                    "short runs on aggregators");
  } else {
    std::printf(
        "  Checkpoints go to the page cache (--durable=0): writing is copying, so "
        "little of it can hide.\n");
  }
  std::printf(
      "  MPICH's MPI-IO writes through the page cache (ROMIO's ufs driver has no "
      "O_DIRECT)%s. A step lasts about %s.\n\n",
      options.durable ? ", then MPI_File_sync after MPI_Wait (MPI-IO has no nonblocking "
                        "sync)"
                      : "",
      options.sweeps == 0 ? "four blocking flowio writes, so that the background write, "
                            "with its hand-offs between threads and processes, can end before "
                            "the step does"
                          : "as long as --sweeps says");
}

void print_table(const InsituReport& report) {
  const RunsMeasurement& runs = report.runs;
  const long long steps = report.options.steps;
  std::printf(
      "%lld rounds; in each, the simulation ran %lld steps of %lld stencil sweeps from its "
      "initial state three times (without checkpoints, with flowio's, with MPICH's; in turn "
      "first). Times are the slowest rank's, median [lowest, highest] over the rounds:\n",
      static_cast<long long>(report.options.rounds), steps, static_cast<long long>(report.sweeps));
  const auto row = [](const std::string& label, const std::string& flowio,
                      const std::string& mpich) {
    std::printf("%-52s %-26s %-26s\n", label.c_str(), flowio.c_str(), mpich.c_str());
  };
  const std::string steps_text = std::to_string(steps) + " steps";
  row("", "flowio", "MPICH's MPI-IO");
  row(steps_text + " with a checkpoint every step (s)",
      seconds_with_range(spread_of(runs.flowio.run)),
      seconds_with_range(spread_of(runs.mpich.run)));
  row(steps_text + " without checkpoints (s)", seconds_with_range(spread_of(runs.bare)),
      "(the same runs)");
  row("a checkpoint's added cost per step (s)", seconds_with_range(spread_of(runs.flowio.added)),
      seconds_with_range(spread_of(runs.mpich.added)));
  const double bare_step = spread_of(runs.bare).median / static_cast<double>(steps);
  const auto share = [bare_step](const ContenderRuns& contender) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f%%", 100 * spread_of(contender.added).median / bare_step);
    return std::string(text);
  };
  row("  median, as a share of a step without checkpoints", share(runs.flowio), share(runs.mpich));
  row("one checkpoint written alone, blocking (s)",
      seconds_with_range(spread_of(runs.flowio.blocking)),
      seconds_with_range(spread_of(runs.mpich.blocking)));
  const auto cpu = [](const ContenderRuns& contender) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", contender.other_threads_cpu);
    return std::string(text);
  };
  row("CPU s of threads besides the simulation's, per step", cpu(runs.flowio), cpu(runs.mpich));
  std::printf(
      "(added cost: (run with checkpoints - run without) / steps, within each round: 0 when the "
      "writes hide entirely behind the computation, about the blocking write's time when "
      "nothing hides, below 0 only when a round's run with checkpoints happened to be quicker "
      "than its run without (noise). CPU: all ranks, runs with checkpoints.)\n\n");
}

void print_verdict(const InsituReport& report) {
  const RunsMeasurement& runs = report.runs;
  const std::vector<double> ratios = mpich_over_flowio(runs);
  const Spread ratio = spread_of(ratios);
  const std::string flowio_added = added_cost(spread_of(runs.flowio.added).median);
  const std::string mpich_added = added_cost(spread_of(runs.mpich.added).median);
  const Verdict verdict = verdict_of(ratios);
  const auto rounds_where = [&](auto beyond) {
    return static_cast<long>(std::count_if(ratios.begin(), ratios.end(), beyond));
  };
  const long flowio_rounds = rounds_where([](double r) { return r > 1 + kClearMargin; });
  const long mpich_rounds = rounds_where([](double r) { return r < 1 / (1 + kClearMargin); });
  const long rounds = static_cast<long>(ratios.size());
  std::printf("verdict: ");
  if (verdict == Verdict::flowio_faster) {
    std::printf(
        "flowio is faster: with a checkpoint every step the simulation ran %.2f times as fast "
        "with flowio as with MPICH's MPI-IO (median of %ld rounds, %ld of them faster by more "
        "than %.0f%%; %.2f to %.2f); a checkpoint added %s per step with flowio, %s with "
        "MPICH.\n",
        ratio.median, rounds, flowio_rounds, 100 * kClearMargin, ratio.low, ratio.high,
        flowio_added.c_str(), mpich_added.c_str());
  } else if (verdict == Verdict::mpich_faster) {
    std::printf(
        "MPICH's MPI-IO is faster: with a checkpoint every step the simulation ran %.2f times "
        "as fast with MPICH's MPI-IO as with flowio (median of %ld rounds, %ld of them faster "
        "by more than %.0f%%; %.2f to %.2f); a checkpoint added %s per step with flowio, %s "
        "with MPICH.\n",
        1 / ratio.median, rounds, mpich_rounds, 100 * kClearMargin, 1 / ratio.high, 1 / ratio.low,
        flowio_added.c_str(), mpich_added.c_str());
  } else {
    std::printf(
        "no clear difference: with a checkpoint every step, MPICH's time over flowio's was "
        "%.2f (median of %ld rounds; %.2f to %.2f): flowio faster by more than %.0f%% in %ld "
        "rounds, MPICH in %ld, where a verdict needs %.0f%% of the rounds; a checkpoint added "
        "%s per step with flowio, %s with MPICH.\n",
        ratio.median, rounds, ratio.low, ratio.high, 100 * kClearMargin, flowio_rounds,
        mpich_rounds, 100 * kAgreeingShare, flowio_added.c_str(), mpich_added.c_str());
  }
  const double mib = static_cast<double>(report.checkpoint_bytes) / 1048576.0;
  for (const auto& [name, contender] :
       {std::pair{"flowio", &runs.flowio}, std::pair{"mpich", &runs.mpich}}) {
    const Spread run = spread_of(contender->run), added = spread_of(contender->added),
                 blocking = spread_of(contender->blocking);
    std::printf(
        "insitu impl=%s ranks=%d cores=%ld mib=%.2f rounds=%lld steps=%lld sweeps=%lld "
        "durable=%d direct_io_hint=%d run_s=%.4g run_low=%.4g run_high=%.4g added_s=%.4g "
        "added_low=%.4g added_high=%.4g blocking_s=%.4g blocking_low=%.4g blocking_high=%.4g "
        "other_threads_cpu=%.4g\n",
        name, report.ranks, report.cores, mib, static_cast<long long>(report.options.rounds),
        static_cast<long long>(report.options.steps), static_cast<long long>(report.sweeps),
        report.options.durable ? 1 : 0,
        std::string(name) == "flowio" && report.direct_in_force ? 1 : 0, run.median, run.low,
        run.high, added.median, added.low, added.high, blocking.median, blocking.low, blocking.high,
        contender->other_threads_cpu);
  }
  const Spread bare = spread_of(runs.bare);
  std::printf("insitu impl=none run_s=%.4g run_low=%.4g run_high=%.4g\n", bare.median, bare.low,
              bare.high);
  for (std::size_t round = 0; round < runs.bare.size(); ++round) {
    std::printf("insitu round=%zu bare_s=%.4g flowio_s=%.4g mpich_s=%.4g mpich_over_flowio=%.4g\n",
                round, runs.bare[round], runs.flowio.run[round], runs.mpich.run[round],
                ratios[round]);
  }
  std::printf("insitu verdict=%s ratio=%.4g ratio_low=%.4g ratio_high=%.4g\n\n",
              verdict_key(verdict), ratio.median, ratio.low, ratio.high);
}

void print_last_write(const flowio::OperationStatistics& last_write) {
  std::printf(
      "flowio's last checkpoint write on rank 0 (File::statistics().back()): operation %llu, "
      "%lld bytes in %.4f s, %d aggregators (rank 0 %s), %lld iterations, method '%s', "
      "realms %s, exchange %s\n",
      static_cast<unsigned long long>(last_write.sequence),
      static_cast<long long>(last_write.bytes), last_write.seconds, last_write.aggregators,
      last_write.aggregator ? "one" : "not one", static_cast<long long>(last_write.iterations),
      last_write.method.c_str(), last_write.realm_policy.c_str(), last_write.exchange.c_str());
  std::printf("  %-10s %10s %14s %10s %12s\n", "stage", "seconds", "bytes", "messages",
              "io requests");
  for (const flowio::StageStatistics& stage : last_write.stages) {
    std::printf("  %-10s %10.4f %14lld %10lld %12lld\n", stage.name.c_str(), stage.seconds,
                static_cast<long long>(stage.bytes), static_cast<long long>(stage.messages),
                static_cast<long long>(stage.io_requests));
  }
}

void print_analysis(const InsituReport& report) {
  std::printf(
      "\nanalysis: every checkpoint of the last runs read back and compared with its "
      "checksum\n");
  std::printf("  %4s %14s %14s %18s %18s %18s\n", "step", "mean T (K)", "peak T (K)",
              "flowio by flowio", "flowio by MPICH", "MPICH by MPICH");
  const auto verdict = [](int bad) { return bad == 0 ? "bit-exact" : "MISMATCH"; };
  for (std::size_t step = 0; step < report.mean_temperature.size(); ++step) {
    std::printf("  %4zu %14.6f %14.6f %18s %18s %18s\n", step, report.mean_temperature[step],
                report.peak_temperature[step], verdict(report.bad_flowio_by_flowio[step]),
                verdict(report.bad_flowio_by_mpich[step]),
                verdict(report.bad_mpich_by_mpich[step]));
  }
}

}  // namespace

Spread spread_of(const std::vector<double>& samples) {
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  return {median(samples), *low, *high};
}

Verdict verdict_of(const std::vector<double>& mpich_over_flowio) {
  const double median_ratio = median(mpich_over_flowio);
  const auto agreeing = [&](auto beyond) {
    const auto count = std::count_if(mpich_over_flowio.begin(), mpich_over_flowio.end(), beyond);
    return static_cast<double>(count) >=
           kAgreeingShare * static_cast<double>(mpich_over_flowio.size());
  };
  const auto flowio_faster = [](double ratio) { return ratio > 1 + kClearMargin; };
  const auto mpich_faster = [](double ratio) { return ratio < 1 / (1 + kClearMargin); };
  if (flowio_faster(median_ratio) && agreeing(flowio_faster)) return Verdict::flowio_faster;
  if (mpich_faster(median_ratio) && agreeing(mpich_faster)) return Verdict::mpich_faster;
  return Verdict::no_clear_difference;
}

void print_insitu_report(const InsituReport& report) {
  const int* grid = report.process_grid;
  std::printf(
      "insitu: %d ranks on a %dx%dx%d process grid (%s), global grid %d^3, %d variables "
      "(temperature, pressure, velocity x/y/z)\n"
      "checkpoint %.2f MiB, one file per implementation with slot s at byte s * %lld:\n"
      "  %s\n  %s\n",
      report.ranks, grid[0], grid[1], grid[2],
      report.options.decomposition == Decomposition::slabs ? "slabs" : "blocks", report.global_size,
      kVariables, static_cast<double>(report.checkpoint_bytes) / 1048576.0,
      static_cast<long long>(report.checkpoint_bytes), report.flowio_path.c_str(),
      report.mpich_path.c_str());
  print_why(report);
  print_table(report);
  print_verdict(report);
  print_last_write(report.last_write);
  print_analysis(report);
  std::printf("\ntrace: %s\n", report.trace.c_str());
  std::printf("insitu: %s\n", report.passed ? "all checkpoints verified" : "VERIFICATION FAILED");
}

}  // namespace insitu
