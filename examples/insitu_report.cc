#include "insitu_report.h"

#include <cstdio>
#include <tuple>

namespace insitu {
namespace {

// A ratio only where both sides are positive: one of a negative number
// means nothing.
std::string ratio(double a, double b) {
  char text[32] = "n/a";
  if (a > 0 && b > 0) std::snprintf(text, sizeof text, "%.2f", a / b);
  return text;
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
  const RoundsMeasurement &flowio = report.flowio, &mpich = report.mpich;
  std::printf(
      "medians over %lld rounds; each round times t_io, then t_total and t_compute (in turn "
      "first), each the slowest rank's:\n",
      static_cast<long long>(report.options.steps));
  std::printf("%-58s %10s %10s %13s\n", "", "flowio", "MPICH", "MPICH/flowio");
  std::printf("%-58s %10.4f %10.4f %13s\n", "t_io: blocking checkpoint write (s)", flowio.t_io,
              mpich.t_io, ratio(mpich.t_io, flowio.t_io).c_str());
  std::printf("%-58s %10.4f %10.4f\n", "t_compute: one step alone (s)", flowio.t_compute,
              mpich.t_compute);
  std::printf("%-58s %10.4f %10.4f %13s\n",
              "t_total: step with the checkpoint written meanwhile (s)", flowio.t_total,
              mpich.t_total, ratio(mpich.t_total, flowio.t_total).c_str());
  std::printf("%-58s %10.4f %10.4f %13s\n", "added: t_total - t_compute, per round (s)",
              flowio.added, mpich.added, ratio(mpich.added, flowio.added).c_str());
  std::printf("%-58s %10.3f %10.3f\n", "overlap: (t_io - added) / min(t_io, t_compute)",
              flowio.overlap, mpich.overlap);
  std::printf("%-58s %10.4f %10.4f\n", "CPU of threads besides the simulation's, per step (s)",
              flowio.other_threads_cpu, mpich.other_threads_cpu);
  std::printf(
      "(added: the median of the rounds' differences. overlap: 1 when the write hides "
      "entirely, 0 when nothing overlaps, negative when writing in the background slows "
      "the step more than writing before it would, above 1 when the step with the write "
      "took less than the longer of the two alone (noise, or a background write cheaper "
      "than the blocking one). CPU: all ranks, steps with a write in flight.)\n");
  const double mib = static_cast<double>(report.checkpoint_bytes) / 1048576.0;
  for (const auto& [name, measured] :
       {std::tuple{"flowio", &flowio}, std::tuple{"mpich", &mpich}}) {
    std::printf(
        "insitu impl=%s ranks=%d cores=%ld mib=%.2f steps=%lld sweeps=%lld durable=%d "
        "direct_io_hint=%d t_io=%.4g t_compute=%.4g t_total=%.4g added=%.4g t_writing=%.4g "
        "other_threads_cpu=%.4g overlap=%.3f\n",
        name, report.ranks, report.cores, mib, static_cast<long long>(report.options.steps),
        static_cast<long long>(report.sweeps), report.options.durable ? 1 : 0,
        std::string(name) == "flowio" && report.direct_in_force ? 1 : 0, measured->t_io,
        measured->t_compute, measured->t_total, measured->added, measured->writing,
        measured->other_threads_cpu, measured->overlap);
  }
  std::printf("\n");
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
  std::printf("\nanalysis: every checkpoint read back and compared with its checksum\n");
  std::printf("  %4s %14s %14s %18s %18s %18s\n", "step", "mean T (K)", "peak T (K)",
              "flowio by flowio", "flowio by MPICH", "MPICH by MPICH");
  const auto verdict = [](int bad) { return bad == 0 ? "bit-exact" : "MISMATCH"; };
  for (std::size_t step = 0; step < report.mean_temperature.size(); ++step) {
    std::printf("  %4zu %14.6f %14.6f %18s %18s %18s\n", step, report.mean_temperature[step],
                report.peak_temperature[step], verdict(report.bad_flowio_by_flowio[step]),
                verdict(report.bad_flowio_by_mpich[step]),
                verdict(report.bad_mpich_by_mpich[step]));
  }
  if (report.loops_differ) std::printf("the two loops saved different checkpoints\n");
}

}  // namespace

void print_insitu_report(const InsituReport& report) {
  const int* grid = report.process_grid;
  std::printf(
      "insitu: %d ranks on a %dx%dx%d process grid (%s), global grid %d^3, %d variables "
      "(temperature, pressure, velocity x/y/z)\n"
      "checkpoint %.2f MiB, %lld rounds with steps of %lld stencil sweeps, one file per "
      "implementation with slot s at byte s * %lld:\n  %s\n  %s\n",
      report.ranks, grid[0], grid[1], grid[2],
      report.options.decomposition == Decomposition::slabs ? "slabs" : "blocks", report.global_size,
      kVariables, static_cast<double>(report.checkpoint_bytes) / 1048576.0,
      static_cast<long long>(report.options.steps), static_cast<long long>(report.sweeps),
      static_cast<long long>(report.checkpoint_bytes), report.flowio_path.c_str(),
      report.mpich_path.c_str());
  print_why(report);
  print_table(report);
  print_last_write(report.last_write);
  print_analysis(report);
  std::printf("\ntrace: %s\n", report.trace.c_str());
  std::printf("insitu: %s\n", report.passed ? "all checkpoints verified" : "VERIFICATION FAILED");
}

}  // namespace insitu
