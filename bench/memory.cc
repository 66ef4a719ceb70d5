// bench/memory: memory use of a large collective write. Every rank writes
// its share of --gib GiB, interleaved with the other ranks' in pieces of
// --piece bytes (so the write goes through two-phase I/O), with flowio and
// with MPICH's MPI-IO. For each, the growth of the process's peak resident
// set over what it held before the write (the data buffer included) is
// reported; flowio's must stay within what its hints allow: two buffers of
// cb_buffer_size per iteration in flight (the window and its sieve
// staging), plus --slack_mib for metadata and allocator slack.
//
// Usage: mpiexec -n N bazel-bin/bench/memory [--gib=4] [--piece=4096]
//   [--buffer_mib=16] [--in_flight=3] [--slack_mib=64] [--dir=$TMPDIR]
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "flowio/flowio.h"

namespace {

// The peak resident set (VmHWM) in MiB.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  throw std::runtime_error("no VmHWM in /proc/self/status");
}

// Resets the peak resident set to the current one (Linux >= 4.0).
void reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

// Peak growth, in MiB, of the largest rank during `write`.
double peak_growth_mib(const std::function<void()>& write) {
  reset_peak_rss();
  const double before = peak_rss_mib();
  write();
  double growth = peak_rss_mib() - before, largest = 0;
  MPI_Allreduce(&growth, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return largest;
}

// Checks 4096 random pieces of this rank in the file against the data.
bool sample_matches(const std::string& path, const std::vector<std::byte>& data, int rank,
                    int ranks, std::int64_t piece) {
  std::ifstream in(path, std::ios::binary);
  std::mt19937_64 rng(static_cast<std::uint64_t>(rank) + 1);
  const std::int64_t pieces = static_cast<std::int64_t>(data.size()) / piece;
  std::vector<char> got(static_cast<std::size_t>(piece));
  for (int i = 0; i < 4096; ++i) {
    const std::int64_t k = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(pieces));
    in.seekg((k * ranks + rank) * piece);
    in.read(got.data(), piece);
    if (!in || std::memcmp(got.data(), data.data() + k * piece, got.size()) != 0) return false;
  }
  return true;
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  // One write and read per side, whose peak memory is the point: no --reps.
  const std::string dir = bench::scratch_dir(options);
  const std::int64_t gib = options.integer("gib", 4, "GiB written in all, shared among the ranks");
  const std::int64_t piece = options.integer(
      "piece", 4096, "bytes of the pieces in which the ranks' data interleave (a multiple of 8)");
  const std::int64_t buffer_mib = options.integer(
      "buffer_mib", 16, "MiB of the collective buffer, both sides (the hint cb_buffer_size)");
  const std::int64_t in_flight = options.integer(
      "in_flight", 3, "iterations flowio pipelines at once (the hint flowio_buffers_in_flight)");
  const std::int64_t slack_mib = options.integer(
      "slack_mib", 64,
      "MiB flowio's peak may grow beyond 2 * in_flight * buffer_mib (metadata, allocator slack)");
  options.finish();
  if (gib < 1 || piece < 8 || piece % 8 != 0 || buffer_mib < 1 || in_flight < 1) {
    throw std::invalid_argument("bad --gib, --piece, --buffer_mib or --in_flight");
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t bytes = (gib << 30) / ranks / piece * piece;
  const std::vector<std::byte> data = bench::pattern(rank, bytes);

  MPI_Datatype block, tile;
  MPI_Type_contiguous(static_cast<int>(piece), MPI_BYTE, &block);
  MPI_Type_create_resized(block, 0, piece * ranks, &tile);
  MPI_Type_free(&block);
  const bench::Datatype filetype(tile);
  const flowio::Hints hints = {{"cb_buffer_size", std::to_string(buffer_mib << 20)},
                               {"flowio_buffers_in_flight", std::to_string(in_flight)}};
  const double allowed =
      2.0 * static_cast<double>(in_flight * buffer_mib) + static_cast<double>(slack_mib);
  const bench::Fields fields = bench::Fields()
                                   .add("GiB", gib)
                                   .add("piece", piece)
                                   .add("cb_buffer_MiB", buffer_mib)
                                   .add("in_flight", in_flight);

  const bench::ScratchFile mpich_path(dir, "memory_mpich");
  double mpich_seconds = 0;
  const double mpich_growth = peak_growth_mib([&] {
    bench::MpiFile file(mpich_path.path(), hints);
    MPI_File_set_view(file.get(), rank * piece, MPI_BYTE, filetype.get(), "native", MPI_INFO_NULL);
    mpich_seconds = bench::time_collective([&] {
      // In doubles: MPICH 4.0.2 asserts that the count fits an int.
      MPI_File_write_all_c(file.get(), data.data(), bytes / 8, MPI_DOUBLE, MPI_STATUS_IGNORE);
    });
    file.close();
  });

  const bench::ScratchFile flowio_path(dir, "memory_flowio");
  double flowio_seconds = 0;
  const double flowio_growth = peak_growth_mib([&] {
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, flowio_path.path(),
                                           flowio::Mode::create | flowio::Mode::wronly, hints);
    file.set_view(rank * piece, MPI_BYTE, filetype.get());
    flowio_seconds =
        bench::time_collective([&] { file.write_all(data.data(), bytes / 8, MPI_DOUBLE); });
    file.close();
  });

  report.line(bench::Fields()
                  .append(fields)
                  .add("impl", "mpich")
                  .add("peak_growth_MiB", mpich_growth)
                  .add("seconds", mpich_seconds));
  report.line(bench::Fields()
                  .append(fields)
                  .add("impl", "flowio")
                  .add("peak_growth_MiB", flowio_growth)
                  .add("allowed_MiB", allowed)
                  .add("seconds", flowio_seconds));
  report.line(bench::Fields().append(fields).add("ratio", mpich_seconds / flowio_seconds));
  bench::verify(sample_matches(flowio_path.path(), data, rank, ranks, piece),
                "flowio's file does not hold the data written");
  bench::verify(sample_matches(mpich_path.path(), data, rank, ranks, piece),
                "MPICH's file does not hold the data written");
  bench::verify(flowio_growth <= allowed, "flowio's peak memory grew beyond what its hints allow");
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "memory", benchmark); }
