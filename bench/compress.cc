// bench/compress: the seed paper's BIPS3D mesh write (Filgueira et al.,
// "Exploiting data compression in collective I/O techniques"), measuring
// the exchange stage of two-phase I/O with LZO1X-1 compression off, on and
// auto (exchange/compress, exchange/compression_rule), and the whole
// collective write through flowio and through MPICH's MPI-IO.
//
// For every data type, load and share of zeros asked for, the mesh
// (compress_mesh.h) is exchanged by the harness (compress_exchange.h) in
// each mode, repetitions interleaved (the order of the modes rotates), each
// mode keeping its rule across repetitions as a file keeps its plan; the
// first repetition, in which auto still measures the links, is reported
// apart (first_s) and left out of the medians. With --total=1 each
// repetition also writes the mesh collectively (compress_write.h) with
// flowio in each mode and with MPICH. Every exchange is checked (each
// realm holds exactly the mesh's values), and at the end the harness's
// file (realms written by their aggregators), flowio's and MPICH's must
// be identical.
// The machine's links are whatever the job runs on: run it under
// tools/netbed.sh for a rate-limited TCP link and say so with --link;
// --sweep only labels the lines (for bench/compress_plot.py).
//
// Usage: mpiexec -n 4 bazel-bin/bench/compress [--link=shm] [--sweep=zeros]
//   [--types=float]
//   [--loads=500] [--zeros=0,25,50,75,100] [--modes=off,on,auto]
//   [--nodes=4096] [--cb_buffer_size=1048576] [--in_flight=8]
//   [--min_bytes=65536] [--total=1] [--reps=5] [--dir=$TMPDIR]
// Output per point and mode: exchange_s (median, slowest rank), first_s,
// vs_off (exchange_s over off's), vs_off_paired (the median over
// repetitions of the mode's time over off's in the same repetition), wire (bytes sent over bytes
// packed), decisions summed over ranks, codec seconds per repetition summed over ranks; with
// --total, MPICH's write time and flowio's in each mode with MPICH's over it (ratio), its exchange
// stage and what it compressed.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/compress_exchange.h"
#include "bench/compress_mesh.h"
#include "bench/compress_write.h"
#include "exchange/compress_stage.h"
#include "exchange/compression_rule.h"
#include "exchange/peer_locality.h"
#include "flowio/error.h"
#include "flowio/file.h"
#include "runtime/engine/progress.h"

namespace {

using bench::compress::ExchangeHarness;
using bench::compress::Mesh;
using bench::compress::MeshSettings;
using bench::compress::WholeWrites;
using flowio::CompressionStatistics;
using flowio::exchange::CompressionRule;
using flowio::exchange::CompressionSettings;

// Statistics of one mode summed over ranks and the timed repetitions.
std::vector<double> flatten(const CompressionStatistics& s) {
  const flowio::CompressionDecisions& d = s.decisions;
  return {static_cast<double>(s.data_bytes_in),
          static_cast<double>(s.data_bytes_out),
          s.compress_seconds,
          s.sample_seconds,
          s.decompress_seconds,
          static_cast<double>(d.compressed),
          static_cast<double>(d.not_shrinking),
          static_cast<double>(d.too_small),
          static_cast<double>(d.unmeasured_link),
          static_cast<double>(d.fast_link),
          static_cast<double>(d.no_saving),
          static_cast<double>(d.no_gain_observed),
          static_cast<double>(d.probes)};
}

std::vector<double> sum_over_ranks(const std::vector<double>& mine) {
  std::vector<double> total(mine.size());
  flowio::check_mpi(MPI_Allreduce(mine.data(), total.data(), static_cast<int>(mine.size()),
                                  MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
                    "MPI_Allreduce");
  return total;
}

// Whether the files are byte for byte the same (rank 0 reads them).
bool same_files(const std::vector<std::string>& paths) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bool same = true;
  if (rank == 0) {
    std::vector<std::string> contents;
    for (const std::string& path : paths) {
      std::ifstream in(path, std::ios::binary);
      contents.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    for (const std::string& content : contents) same = same && content == contents.front();
  }
  return same;
}

// The median over repetitions of mode[i] / off[i]. A repetition runs every
// mode back to back, so each ratio compares runs under the same load; on
// a shared machine, where load swings between repetitions, it varies less
// than the ratio of the two medians.
double paired_ratio(const std::vector<double>& mode, const std::vector<double>& off) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < mode.size() && i < off.size(); ++i) {
    if (off[i] > 0) ratios.push_back(mode[i] / off[i]);
  }
  return ratios.empty() ? 0.0 : bench::median(ratios);
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::string link = options.text(
      "link", "shm",
      "name of the link the job runs over (e.g. 1gbit under tools/netbed.sh); a label only");
  // As the engine's rule knows it (runtime/stages/file_context.cc).
  const std::vector<bool> shares_memory = flowio::exchange::peers_sharing_memory(MPI_COMM_WORLD);
  const std::string sweep = options.text(
      "sweep", "zeros", "name of the parameter swept, for bench/compress_plot.py; a label only");
  const std::vector<std::string> types = options.list(
      "types", "float",
      "value types of the mesh, one point each: int (4-byte integers), float (8-byte floats)");
  const std::vector<std::int64_t> loads =
      options.integers("loads", "500", "words per mesh node, one point each");
  const std::vector<std::int64_t> zeros = options.integers(
      "zeros", "0,25,50,75,100", "percent of the values that are zero, one point each");
  const std::vector<std::string> modes =
      options.list("modes", "off,on,auto",
                   "compression modes compared (the hint flowio_compress): off, on, auto");
  const std::int64_t nodes = options.integer("nodes", 4096, "nodes of the mesh");
  const std::int64_t window = options.integer(
      "cb_buffer_size", 1048576,
      "bytes of an aggregator's window (the hint cb_buffer_size), in the exchange and the writes");
  const std::int64_t in_flight =
      options.integer("in_flight", 8, "messages a rank may have in flight at once in the exchange");
  const std::string min_bytes = std::to_string(options.integer(
      "min_bytes", 65536,
      "messages shorter than this, in bytes, go raw (the hint flowio_compress_min_bytes)"));
  const bool total =
      options.integer(
          "total", 1,
          "1: also time the whole collective write, flowio in each mode and MPICH; 0: the exchange "
          "only") != 0;
  const bool verbose =
      options.integer("verbose", 0,
                      "1: print each rank's rate estimates per mode on stderr (MB/s); 0: not") != 0;
  options.finish();
  for (const std::string& type : types) {
    if (type != "int" && type != "float") throw std::invalid_argument("--types: int or float");
  }
  if (modes.empty()) throw std::invalid_argument("--modes: empty list");

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  flowio::runtime::Progress progress;

  for (const std::string& type : types) {
    for (const std::int64_t load : loads) {
      for (const std::int64_t zero_percent : zeros) {
        MeshSettings settings;
        settings.nodes = nodes;
        settings.load = load;
        settings.floating = type == "float";
        settings.zero_percent = static_cast<int>(zero_percent);
        const Mesh mesh(settings, ranks, window);
        ExchangeHarness harness(mesh, static_cast<int>(in_flight), progress);
        const bench::Fields fields =
            bench::Fields()
                .add("sweep", sweep)
                .add("link", link)
                .add("type", type)
                .add("load", load)
                .add("zeros", zero_percent)
                .add("nodes", nodes)
                .add("MiB", static_cast<double>(mesh.file_bytes()) / 1048576.0);

        std::map<std::string, CompressionRule> rules;
        std::map<std::string, CompressionStatistics> statistics;
        std::map<std::string, std::vector<double>> seconds;
        std::map<std::string, double> first;
        for (const std::string& mode : modes) {
          rules.try_emplace(
              mode,
              CompressionSettings::from_hints(
                  {{"flowio_compress", mode}, {"flowio_compress_min_bytes", min_bytes}}),
              ranks, shares_memory);
        }

        const bench::ScratchFile harness_path(common.dir, "compress_harness");
        std::optional<WholeWrites> writes;
        if (total) writes.emplace(mesh, modes, common.dir, window);
        for (int rep = 0; rep <= common.reps; ++rep) {
          for (std::size_t m = 0; m < modes.size(); ++m) {
            const std::string& mode = modes[(m + static_cast<std::size_t>(rep)) % modes.size()];
            CompressionStatistics run_statistics;
            const double elapsed =
                bench::time_collective([&] { harness.run(rules.at(mode), run_statistics); });
            bench::verify(harness.realm_is_correct(),
                          "exchange left wrong data in a realm, mode " + mode);
            if (rep == 0) {
              first[mode] = elapsed;
              continue;
            }
            seconds[mode].push_back(elapsed);
            flowio::exchange::add_statistics(statistics[mode], run_statistics);
          }
          if (writes) writes->write(rep == 0, rep);
        }
        if (writes) writes->close();

        if (verbose) {
          for (const std::string& mode : modes) {
            const auto estimates = rules.at(mode).estimates();
            const auto megabytes = [](const std::optional<double>& rate) {
              return " " + std::to_string(static_cast<long long>(rate.value_or(0) / 1e6));
            };
            std::string text = "# rank " + std::to_string(rank) + " mode " + mode +
                               " MB/s: compress" + megabytes(estimates.compress_bytes_per_second) +
                               " decompress" + megabytes(estimates.decompress_bytes_per_second) +
                               "; by peer: link";
            for (const auto& rate : estimates.link_bytes_per_second) text += megabytes(rate);
            text += "; stages: raw" + megabytes(estimates.raw_stage_bytes_per_second) +
                    " compressed" + megabytes(estimates.compressed_stage_bytes_per_second);
            std::fprintf(stderr, "%s\n", text.c_str());
          }
        }
        const double off_seconds =
            seconds.count("off") != 0 ? bench::median(seconds.at("off")) : 0.0;
        for (const std::string& mode : modes) {
          const std::vector<double> sums = sum_over_ranks(flatten(statistics[mode]));
          const double reps = static_cast<double>(common.reps);
          const double exchange = bench::median(seconds.at(mode));
          bench::Fields line = bench::Fields(fields)
                                   .add("stage", "exchange")
                                   .add("mode", mode)
                                   .add("exchange_s", exchange)
                                   .add("first_s", first.at(mode));
          if (off_seconds > 0) {
            line.add("vs_off", exchange / off_seconds)
                .add("vs_off_paired", paired_ratio(seconds.at(mode), seconds.at("off")));
          }
          report.line(line.add("wire", sums[0] > 0 ? sums[1] / sums[0] : 1.0)
                          .add("compressed", sums[5] / reps)
                          .add("not_shrinking", sums[6] / reps)
                          .add("too_small", sums[7] / reps)
                          .add("unmeasured", sums[8] / reps)
                          .add("fast_link", sums[9] / reps)
                          .add("no_saving", sums[10] / reps)
                          .add("no_gain", sums[11] / reps)
                          .add("probes", sums[12] / reps)
                          .add("compress_s", sums[2] / reps)
                          .add("sample_s", sums[3] / reps)
                          .add("decompress_s", sums[4] / reps));
        }

        // The harness's file: each aggregator writes its realm.
        if (rank == 0) {
          const int fd = ::open(harness_path.path().c_str(), O_CREAT | O_WRONLY, 0644);
          if (fd < 0) flowio::throw_errno(errno, "open " + harness_path.path());
          ::close(fd);
        }
        flowio::check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        const int fd = ::open(harness_path.path().c_str(), O_WRONLY);
        if (fd < 0) flowio::throw_errno(errno, "open " + harness_path.path());
        const ssize_t wrote = ::pwrite(fd, harness.realm().data(), harness.realm().size(),
                                       static_cast<off_t>(harness.realm_offset()));
        ::close(fd);
        bench::verify(wrote == static_cast<ssize_t>(harness.realm().size()),
                      "short write of the harness file");
        flowio::check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        if (writes) {
          writes->report(report, fields);
          std::vector<std::string> paths = writes->paths();
          paths.push_back(harness_path.path());
          bench::verify(same_files(paths), "the harness's, flowio's and MPICH's files differ");
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "compress", benchmark); }
