// bench/sieve: where data sieving starts to pay, on this machine. An
// aggregator's window of --window_mib MiB holds pieces of --piece bytes
// spaced --distance bytes apart (start to start); the window is written
// (and read) by data sieving (read-modify-write of the extent), by data
// sieving through a mapping of the file (flowio_ds_mapping=enable), and by
// vectored I/O (one request per piece, batched), into a file already in
// the page cache. The crossover distance is the default of the hint
// flowio_ds_threshold. This calibrates flowio's own rule, so there is no
// MPICH side.
//
// Usage: bazel-bin/bench/sieve [--piece=8] [--window_mib=16] [--reps=5]
//   [--backend=auto|io_uring|posix] [--dir=$TMPDIR]
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_support.h"
#include "io/storage_backend.h"
#include "io/window_io.h"

namespace {

double seconds_of(const std::function<void()>& work) {
  const auto begin = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::int64_t piece = options.integer(
      "piece", 8, "bytes of a piece; distances run from 2 pieces to 1 MiB, doubling");
  const std::int64_t window = options.integer("window_mib", 16, "MiB of the window") << 20;
  const std::string backend_name = options.choice(
      "backend", "auto", {"auto", "io_uring", "posix"},
      "storage backend; auto: $FLOWIO_IO_BACKEND, else io_uring where the kernel allows it");
  options.finish();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  const auto backend =
      flowio::io::make_storage_backend(flowio::io::parse_backend_kind(backend_name));
  const bench::ScratchFile path(common.dir, "sieve");
  const int fd = ::open(path.path().c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  std::vector<char> image(static_cast<std::size_t>(window), 'x');
  if (fd < 0 || ::pwrite(fd, image.data(), image.size(), 0) != window) {
    throw std::runtime_error("cannot prepare " + path.path());
  }
  std::vector<char> data(static_cast<std::size_t>(window), 'd');
  std::vector<char> staging;
  // Sieving writes hold it, as aggregators do (its cost is measured).
  flowio::io::SieveLock sieve_lock(fd);
  for (std::int64_t distance = 2 * piece; distance <= (std::int64_t{1} << 20); distance *= 2) {
    std::vector<flowio::io::WindowPiece> pieces;
    for (std::int64_t at = 0; at + piece <= window; at += distance) {
      pieces.push_back(flowio::io::WindowPiece{at, piece, data.data() + at});
    }
    for (const bool writing : {true, false}) {
      using flowio::io::SieveMode;
      // Sieving with copies (read-modify-write), sieving through a
      // mapping of the file, and vectored I/O.
      const std::vector<std::pair<SieveMode, SieveMode>> methods = {
          {SieveMode::enable, SieveMode::disable},
          {SieveMode::enable, SieveMode::enable},
          {SieveMode::disable, SieveMode::disable}};
      std::vector<std::vector<double>> times(methods.size());
      for (int rep = 0; rep < common.reps; ++rep) {
        for (std::size_t m = 0; m < methods.size(); ++m) {
          flowio::io::WindowIoSettings settings{methods[m].first, 0};
          settings.mapping = methods[m].second;
          times[m].push_back(seconds_of([&] {
            if (writing) {
              flowio::io::write_window(*backend, fd, pieces, settings, staging, &sieve_lock);
            } else {
              flowio::io::read_window(*backend, fd, pieces, settings, staging);
            }
          }));
        }
      }
      const double sieve = bench::median(times[0]), mapped = bench::median(times[1]),
                   vectored = bench::median(times[2]);
      const double fastest = std::min({sieve, mapped, vectored});
      report.line(bench::Fields()
                      .add("backend", backend->name())
                      .add("op", writing ? "write" : "read")
                      .add("piece", piece)
                      .add("distance", distance)
                      .add("pieces", static_cast<std::int64_t>(pieces.size()))
                      .add("sieve_s", sieve)
                      .add("mapped_s", mapped)
                      .add("vectored_s", vectored)
                      .add("faster", fastest == sieve    ? "sieve"
                                     : fastest == mapped ? "mapped"
                                                         : "vectored"));
    }
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "sieve", benchmark); }
