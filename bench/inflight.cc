// bench/inflight: several collective writes in flight at once, as a code
// that checkpoints several variables writes them. Each process writes
// --ops operations of --size bytes each, operation k filling the k-th block
// of the file, in which process r's bytes come r-th (a contiguous file
// piece per process; in memory contiguous, c-c, or the NCIO case's
// strided regions, nc-c, bench/regions.h), either all started before any
// is waited for
// (iwrite_at_all, then wait for all) or one after another, blocking
// (write_at_all), through flowio and through MPICH's MPI-IO, rounds of the
// four interleaved. Reports the median milliseconds of the whole batch of
// each, the gain of having them in flight (blocking / in flight, per
// implementation) and MPICH / flowio in flight (above 1: flowio faster).
//
// Usage: mpiexec -n N bazel-bin/bench/inflight [--ops=8] [--size=1048576]
//   [--case=all|c-c|nc-c] [--reps=5] [--dir=$TMPDIR]
#include <mpi.h>

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

struct Way {
  std::string name;
  std::function<void()> batch;
};

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::int64_t ops =
      options.integer("ops", 8, "collective writes in a batch, each to its own block of the file");
  const std::int64_t size = options.integer(
      "size", 1048576, "bytes each rank writes per operation (rounded down to 8-byte regions)");
  std::vector<std::string> cases = {"c-c", "nc-c"};
  const std::string chosen = options.choice(
      "case", "all", {"all", "c-c", "nc-c"},
      "memory layout: c-c contiguous, nc-c strided regions (bench/regions.h); all: both");
  if (chosen != "all") cases = {chosen};
  options.finish();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  for (const std::string& name : cases) {
    const bench::RegionPattern pattern = bench::sized_region_pattern(name, size);
    const bench::RegionAccess region =
        bench::make_region_access(pattern, bench::Description::compact);
    const bench::Access& access = region.access;
    const std::int64_t bytes = bench::data_bytes(access);
    // One buffer per operation: those in flight must not share one.
    const std::vector<std::vector<std::byte>> buffers(static_cast<std::size_t>(ops),
                                                      bench::rank_data(access));
    const bench::ScratchFile flowio_path(common.dir, "inflight-flowio.dat"),
        mpich_path(common.dir, "inflight-mpich.dat");
    flowio::File file = flowio::File::open(MPI_COMM_WORLD, flowio_path.path(),
                                           flowio::Mode::create | flowio::Mode::rdwr);
    bench::MpiFile mpich(mpich_path.path(), {});
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const auto offset_of = [&](std::int64_t k) { return (k * ranks + rank) * bytes; };
    const std::vector<Way> ways = {
        {"flowio_inflight",
         [&] {
           std::vector<flowio::Future<std::size_t>> futures;
           for (std::int64_t k = 0; k < ops; ++k) {
             futures.push_back(
                 file.iwrite_at_all(offset_of(k), buffers[k].data(), access.count, access.memtype));
           }
           for (auto& future : futures) future.get();
         }},
        {"flowio_blocking",
         [&] {
           for (std::int64_t k = 0; k < ops; ++k) {
             file.write_at_all(offset_of(k), buffers[k].data(), access.count, access.memtype);
           }
         }},
        {"mpich_inflight",
         [&] {
           std::vector<MPI_Request> requests(static_cast<std::size_t>(ops));
           for (std::int64_t k = 0; k < ops; ++k) {
             check_mpi(MPI_File_iwrite_at_all_c(mpich.get(), offset_of(k), buffers[k].data(),
                                                access.count, access.memtype, &requests[k]),
                       "MPI_File_iwrite_at_all_c");
           }
           check_mpi(MPI_Waitall(static_cast<int>(ops), requests.data(), MPI_STATUSES_IGNORE),
                     "MPI_Waitall");
         }},
        {"mpich_blocking",
         [&] {
           for (std::int64_t k = 0; k < ops; ++k) {
             check_mpi(MPI_File_write_at_all_c(mpich.get(), offset_of(k), buffers[k].data(),
                                               access.count, access.memtype, MPI_STATUS_IGNORE),
                       "MPI_File_write_at_all_c");
           }
         }},
    };
    // Untimed once each: file creation and first-touch page faults.
    for (const Way& way : ways) way.batch();
    std::vector<std::vector<double>> times(ways.size());
    for (int rep = 0; rep < common.reps; ++rep) {
      for (std::size_t w = 0; w < ways.size(); ++w) {
        times[w].push_back(bench::time_collective(ways[w].batch) * 1e3);
      }
    }
    file.close();
    mpich.close();
    const double flowio_inflight = bench::median(times[0]);
    const double flowio_blocking = bench::median(times[1]);
    const double mpich_inflight = bench::median(times[2]);
    const double mpich_blocking = bench::median(times[3]);
    report.line(bench::region_fields(pattern)
                    .add("bytes_per_rank_per_op", bytes)
                    .add("ops", ops)
                    .add("flowio_inflight_ms", flowio_inflight)
                    .add("flowio_blocking_ms", flowio_blocking)
                    .add("mpich_inflight_ms", mpich_inflight)
                    .add("mpich_blocking_ms", mpich_blocking)
                    .add("flowio_inflight_gain", flowio_blocking / flowio_inflight)
                    .add("mpich_inflight_gain", mpich_blocking / mpich_inflight)
                    .add("ratio_inflight", mpich_inflight / flowio_inflight));
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "inflight", benchmark); }
