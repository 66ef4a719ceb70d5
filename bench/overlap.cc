// bench/overlap: how much of a checkpoint's durable write hides behind
// computation. Each rank writes its share of --mib MiB (contiguous, ranks
// one after another). Per repetition and implementation:
//   t_io:      a blocking collective write of the checkpoint plus sync;
//   t_total:   the same write started nonblocking, then t_io seconds of
//              busy arithmetic on every rank (t_compute, as measured), then
//              wait and sync;
//   overlap =  (t_io + t_compute - t_total) / min(t_io, t_compute):
//              1 when the write hides entirely, 0 when nothing overlaps.
// flowio: iwrite_at_all, compute, Future::get(), sync(). MPICH:
// MPI_File_iwrite_at_all_c, compute calling MPI_Test about every ms (MPICH
// progresses nonblocking I/O only inside MPI calls unless its progress
// thread is on: MPIR_CVAR_ASYNC_PROGRESS=1), MPI_Wait, MPI_File_sync.
// Medians over the repetitions; MiBps is the blocking write's bandwidth.
// What the library's own threads cost meanwhile, in CPU seconds per second
// of t_total: helper_cpu, every thread of the process but the caller's
// (flowio: progress, I/O and oneTBB threads; MPICH: its progress thread
// when on); progress_cpu, flowio's progress thread alone. The note after
// the table gives flowio's progress thread while nothing is outstanding.
//
// --direct=1 gives flowio the hint flowio_direct_io=enable: its aligned
// requests then go to an O_DIRECT descriptor, moved by DMA, so the device
// rather than the CPU bounds the write (ROMIO has no O_DIRECT path for
// this file system; MPICH stays buffered + sync).
//
// Usage: mpiexec -n N bazel-bin/bench/overlap [--mib=256] [--direct=0|1]
//   [--reps=5] [--dir=$TMPDIR] [--idle_seconds=2]
#include <mpi.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "runtime/engine/engine.h"

namespace {

using flowio::check_mpi;

// Busy arithmetic for `seconds`, calling `poll` about once a millisecond;
// returns the seconds it took.
double compute(double seconds, const std::function<void()>& poll) {
  const double start = MPI_Wtime();
  double next_poll = start + 1e-3, x = 1.0;
  for (double now = start; now - start < seconds; now = MPI_Wtime()) {
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    if (now >= next_poll) {
      poll();
      next_poll = now + 1e-3;
    }
  }
  // Keeps the arithmetic from being optimized away.
  volatile double result = x;
  static_cast<void>(result);
  return MPI_Wtime() - start;
}

// One implementation's three phases.
struct Phases {
  std::function<void()> blocking_write;  // write + sync
  std::function<void()> start_write;
  std::function<void()> poll;
  std::function<void()> finish_write;  // wait + sync
};

struct Times {
  std::vector<double> io, compute, total, overlap, helper_cpu, progress_cpu;
};

double cpu_seconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// CPU seconds of every thread of this process but the calling one.
double helper_cpu_seconds() {
  const double caller = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - caller;
}

double progress_cpu_seconds() {
  return static_cast<double>(flowio::runtime::Engine::acquire()->progress().cpu_ns()) * 1e-9;
}

void measure(const Phases& phases, Times& times) {
  const double t_io = bench::time_collective(phases.blocking_write);
  double t_compute = 0;
  const double helper_before = helper_cpu_seconds(), progress_before = progress_cpu_seconds();
  const double t_total = bench::time_collective([&] {
    phases.start_write();
    t_compute = compute(t_io, phases.poll);
    phases.finish_write();
  });
  // The process and thread clocks are read at different instants: with no
  // other thread running, the difference may dip nanoseconds below zero.
  times.helper_cpu.push_back(std::max(0.0, helper_cpu_seconds() - helper_before) / t_total);
  times.progress_cpu.push_back((progress_cpu_seconds() - progress_before) / t_total);
  double slowest_compute = 0;
  check_mpi(MPI_Allreduce(&t_compute, &slowest_compute, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce");
  times.io.push_back(t_io);
  times.compute.push_back(slowest_compute);
  times.total.push_back(t_total);
  times.overlap.push_back((t_io + slowest_compute - t_total) / std::min(t_io, slowest_compute));
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::int64_t mib =
      options.integer("mib", 256, "MiB of the checkpoint, shared among the ranks");
  const bool direct =
      options.integer("direct", 0,
                      "1: flowio writes with O_DIRECT (flowio_direct_io=enable); 0: buffered") != 0;
  const double idle_seconds = static_cast<double>(options.integer(
      "idle_seconds", 2, "seconds flowio's idle progress thread is measured (the closing note)"));
  options.finish();
  if (mib < 1) throw std::invalid_argument("--mib must be positive");

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t bytes = mib * 1048576 / ranks;
  const std::vector<std::byte> data = bench::pattern(rank, bytes);
  // O_DIRECT needs block-aligned memory: write from an aligned copy.
  const std::size_t rounded = (static_cast<std::size_t>(bytes) + 4095) / 4096 * 4096;
  const std::unique_ptr<std::byte, decltype(&std::free)> aligned(
      static_cast<std::byte*>(std::aligned_alloc(4096, rounded)), &std::free);
  std::memcpy(aligned.get(), data.data(), data.size());
  const flowio::Hints hints =
      direct ? flowio::Hints{{"flowio_direct_io", "enable"}} : flowio::Hints{};

  const bench::ScratchFile flowio_path(common.dir, "flowio.dat"),
      mpich_path(common.dir, "mpich.dat");
  flowio::File file = flowio::File::open(MPI_COMM_WORLD, flowio_path.path(),
                                         flowio::Mode::create | flowio::Mode::rdwr, hints);
  file.set_view(rank * bytes, MPI_BYTE, MPI_BYTE);
  bench::MpiFile mpich(mpich_path.path(), {});
  check_mpi(
      MPI_File_set_view(mpich.get(), rank * bytes, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
      "MPI_File_set_view");

  flowio::Future<std::size_t> written;
  const Phases flowio_phases{
      [&] {
        file.write_at_all(0, aligned.get(), bytes, MPI_BYTE);
        file.sync();
      },
      [&] { written = file.iwrite_at_all(0, aligned.get(), bytes, MPI_BYTE); }, [] {},
      [&] {
        written.get();
        file.sync();
      }};
  MPI_Request request = MPI_REQUEST_NULL;
  const Phases mpich_phases{[&] {
                              check_mpi(MPI_File_write_at_all_c(mpich.get(), 0, aligned.get(),
                                                                bytes, MPI_BYTE, MPI_STATUS_IGNORE),
                                        "MPI_File_write_at_all_c");
                              check_mpi(MPI_File_sync(mpich.get()), "MPI_File_sync");
                            },
                            [&] {
                              check_mpi(MPI_File_iwrite_at_all_c(mpich.get(), 0, aligned.get(),
                                                                 bytes, MPI_BYTE, &request),
                                        "MPI_File_iwrite_at_all_c");
                            },
                            [&] {
                              int done = 0;
                              check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
                            },
                            [&] {
                              check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
                              check_mpi(MPI_File_sync(mpich.get()), "MPI_File_sync");
                            }};

  Times flowio_times, mpich_times;
  for (int rep = 0; rep < common.reps; ++rep) {
    measure(flowio_phases, flowio_times);
    measure(mpich_phases, mpich_times);
  }

  // flowio's progress thread with the file open and nothing outstanding.
  const double idle_before = progress_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
  const double idle_cpu = (progress_cpu_seconds() - idle_before) / idle_seconds;
  file.close();
  mpich.close();
  const bench::Access checkpoint{rank * bytes, MPI_BYTE, MPI_BYTE, bytes};
  for (const auto& [writer, path] :
       {std::pair<std::string, std::string>{"flowio", flowio_path.path()},
        {"mpich", mpich_path.path()}}) {
    for (const std::string reader : {"flowio", "mpich"}) {
      bench::verify_file(reader, path, checkpoint, data, writer + "'s checkpoint");
    }
  }
  bench::verify_same_size(flowio_path.path(), mpich_path.path(), "the checkpoint");

  const char* async_progress = std::getenv("MPIR_CVAR_ASYNC_PROGRESS");
  for (const auto& [impl, times] :
       {std::pair<std::string, const Times&>{"flowio", flowio_times}, {"mpich", mpich_times}}) {
    bench::Fields line;
    line.add("mib", mib).add("direct", direct && impl == "flowio" ? 1 : 0).add("impl", impl);
    if (impl == "mpich") line.add("async_progress", async_progress ? async_progress : "0");
    line.add("MiBps", static_cast<double>(bytes) * ranks / 1048576.0 / bench::median(times.io))
        .add("t_io", bench::median(times.io))
        .add("t_compute", bench::median(times.compute))
        .add("t_total", bench::median(times.total))
        .add("overlap", bench::median(times.overlap))
        .add("helper_cpu", bench::median(times.helper_cpu));
    if (impl == "flowio") {
      line.add("progress_cpu", bench::median(times.progress_cpu));
    } else {
      line.add("progress_cpu", "-");
    }
    report.line(line);
  }
  char idle_text[160];
  std::snprintf(idle_text, sizeof idle_text,
                "flowio's progress thread while idle (file open, nothing outstanding, "
                "%.0f s): %.3f%% of a core",
                idle_seconds, idle_cpu * 100);
  report.note(idle_text);
  report.note(
      "MPICH's other setting to compare: MPIR_CVAR_ASYNC_PROGRESS=1 in the environment "
      "(its progress thread); see bench/README.md");
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "overlap", benchmark); }
