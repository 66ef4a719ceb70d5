// bench/sieve: where data sieving starts to pay, on this machine. An
// aggregator's window of --window_mib MiB holds pieces of --piece bytes
// spaced --distance bytes apart (start to start); the window is written
// (and read) by data sieving (read-modify-write of the extent) and by
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

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
  return bench::run_benchmark(
      argc, argv, "sieve", [](bench::Options& options, bench::Report& report) {
        const bench::Common common(options);
        const std::int64_t piece = options.integer("piece", 8);
        const std::int64_t window = options.integer("window_mib", 16) << 20;
        const std::string backend_name =
            options.choice("backend", "auto", {"auto", "io_uring", "posix"});
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
        for (std::int64_t distance = 2 * piece; distance <= (std::int64_t{1} << 20);
             distance *= 2) {
          std::vector<flowio::io::WindowPiece> pieces;
          for (std::int64_t at = 0; at + piece <= window; at += distance) {
            pieces.push_back(flowio::io::WindowPiece{at, piece, data.data() + at});
          }
          for (const bool writing : {true, false}) {
            double sieve = 0, vectored = 0;
            std::vector<double> sieve_times, vectored_times;
            for (int rep = 0; rep < common.reps; ++rep) {
              for (const auto mode :
                   {flowio::io::SieveMode::enable, flowio::io::SieveMode::disable}) {
                const flowio::io::WindowIoSettings settings{mode, 0};
                const double t = seconds_of([&] {
                  if (writing) {
                    flowio::io::write_window(*backend, fd, pieces, settings, staging);
                  } else {
                    flowio::io::read_window(*backend, fd, pieces, settings, staging);
                  }
                });
                (mode == flowio::io::SieveMode::enable ? sieve_times : vectored_times).push_back(t);
              }
            }
            sieve = bench::median(sieve_times);
            vectored = bench::median(vectored_times);
            report.line(bench::Fields()
                            .add("backend", backend->name())
                            .add("op", writing ? "write" : "read")
                            .add("piece", piece)
                            .add("distance", distance)
                            .add("pieces", static_cast<std::int64_t>(pieces.size()))
                            .add("sieve_s", sieve)
                            .add("vectored_s", vectored)
                            .add("faster", sieve < vectored ? "sieve" : "vectored"));
          }
        }
        ::close(fd);
      });
}
