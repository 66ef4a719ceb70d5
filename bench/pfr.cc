// bench/pfr: the persistent-file-realm test of Coloma et al. ("A new
// flexible MPI collective I/O implementation"). Each of --steps time steps
// is one collective write that appends a new region of the file, in which
// the ranks' elements interleave: in step s, element p of rank r lies at
//   s * points * ranks * element + (p * ranks + r) * element.
// flowio runs it once per file-realm policy (even; aligned to --alignment;
// persistent; load_balanced; datatype realms: round-robin stripes of
// --stripe bytes by the hint flowio_realm_stripe, and realms described by
// File::set_file_realms that give each aggregator an equal contiguous
// share of every step's region), MPICH with default hints and, with
// --romio_pfr=1, with romio_cb_pfr=enable. That one is off by default
// because MPICH 4.0.2's ROMIO aborts on the hint with this pattern, even
// one step of a few elements (assertion `cur_off_proc != -1' in
// ADIOI_Build_client_reqs). Every configuration writes its own file,
// repetitions interleave the configurations, and each is reported as the
// median time of all steps, with the ratio of its bandwidth to MPICH's with
// default hints. Every file is then read back whole by both implementations
// and checked.
//
// Usage: mpiexec -n N bazel-bin/bench/pfr [--steps=20] [--points=16384]
//   [--element=32] [--alignment=1048576] [--stripe=1048576] [--sync=0|1]
//   [--romio_pfr=0|1] [--reps=5] [--dir=$TMPDIR]
// --sync=1 syncs after every step, inside the timing.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_support.h"
#include "flowio/error.h"
#include "flowio/file.h"

namespace {

using flowio::check_mpi;

struct Configuration {
  std::string impl;  // "flowio" or "mpich"
  std::string key;   // "policy" (flowio) or "hints" (MPICH)
  std::string value;
  flowio::Hints hints;
  bench::ScratchFile file;
  // Set: after open, flowio's realms are described as one type, stripes of
  // this many bytes dealt round robin to all ranks (File::set_file_realms).
  std::int64_t described_stripe = 0;
};

// The rank's part: `all` is every step at once (view and whole stream);
// step s writes bytes [s * step_bytes, (s + 1) * step_bytes) of `stream`.
struct Steps {
  bench::Access all;
  std::int64_t steps;
  std::int64_t step_bytes;
  bool sync;
  const std::vector<std::byte>& stream;
};

// Opens the configuration's file, times every step, closes.
double run_flowio(const Configuration& configuration, const Steps& steps) {
  flowio::File file =
      flowio::File::open(MPI_COMM_WORLD, configuration.file.path(),
                         flowio::Mode::create | flowio::Mode::rdwr, configuration.hints);
  if (configuration.described_stripe > 0) {
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Datatype run = MPI_DATATYPE_NULL, spaced = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_contiguous(static_cast<int>(configuration.described_stripe), MPI_BYTE, &run),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_create_resized(run, 0, configuration.described_stripe * ranks, &spaced),
              "MPI_Type_create_resized");
    MPI_Type_free(&run);
    const bench::Datatype realm(spaced);
    file.set_file_realms(flowio::FileRealm{0, realm.get()});
  }
  file.set_view(steps.all.displacement, MPI_BYTE, steps.all.filetype);
  const double seconds = bench::time_collective([&] {
    for (std::int64_t s = 0; s < steps.steps; ++s) {
      file.write_at_all(s * steps.step_bytes, steps.stream.data() + s * steps.step_bytes,
                        steps.step_bytes, MPI_BYTE);
      if (steps.sync) file.sync();
    }
  });
  file.close();
  return seconds;
}

double run_mpich(const Configuration& configuration, const Steps& steps) {
  bench::MpiFile file(configuration.file.path(), configuration.hints);
  check_mpi(MPI_File_set_view(file.get(), steps.all.displacement, MPI_BYTE, steps.all.filetype,
                              "native", MPI_INFO_NULL),
            "MPI_File_set_view");
  const double seconds = bench::time_collective([&] {
    for (std::int64_t s = 0; s < steps.steps; ++s) {
      check_mpi(MPI_File_write_at_all_c(file.get(), s * steps.step_bytes,
                                        steps.stream.data() + s * steps.step_bytes,
                                        steps.step_bytes, MPI_BYTE, MPI_STATUS_IGNORE),
                "MPI_File_write_at_all_c");
      if (steps.sync) check_mpi(MPI_File_sync(file.get()), "MPI_File_sync");
    }
  });
  file.close();
  return seconds;
}

// The benchmark, given its options (bench::run_benchmark calls it).
void benchmark(bench::Options& options, bench::Report& report) {
  const bench::Common common(options);
  const std::int64_t steps =
      options.integer("steps", 20, "time steps, each one collective write appending to the file");
  const std::int64_t points =
      options.integer("points", 16384, "elements each rank writes per step");
  const std::int64_t element = options.integer("element", 32, "bytes of one element");
  const std::string alignment = std::to_string(options.integer(
      "alignment", 1048576, "bytes the aligned policy aligns realms to (romio_cb_fr_alignment)"));
  const std::string stripe = std::to_string(options.integer(
      "stripe", 1048576, "bytes of the datatype_stripe policy's stripes (flowio_realm_stripe)"));
  const std::string sync = options.choice(
      "sync", "0", {"0", "1"}, "1: sync after every step, inside the timing; 0: no sync");
  const bool romio_pfr =
      options.choice(
          "romio_pfr", "0", {"0", "1"},
          "1: also MPICH with romio_cb_pfr=enable (MPICH 4.0.2's ROMIO aborts on it); 0: not") ==
      "1";
  options.finish();
  if (steps < 1 || points < 1 || element < 1) {
    throw std::invalid_argument("--steps, --points and --element must be positive");
  }

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Datatype elements, filetype;
  check_mpi(MPI_Type_vector(static_cast<int>(points), static_cast<int>(element),
                            static_cast<int>(ranks * element), MPI_BYTE, &elements),
            "MPI_Type_vector");
  check_mpi(MPI_Type_create_resized(elements, 0, points * ranks * element, &filetype),
            "MPI_Type_create_resized");
  MPI_Type_free(&elements);
  const bench::Datatype view(filetype);
  const std::vector<std::byte> stream = bench::pattern(rank, steps * points * element);
  const Steps layout{{rank * element, view.get(), MPI_BYTE, steps * points * element},
                     steps,
                     points * element,
                     sync == "1",
                     stream};

  std::vector<Configuration> configurations;
  const auto add = [&](std::string impl, std::string key, std::string value, flowio::Hints hints) {
    configurations.push_back(
        Configuration{impl, key, value, std::move(hints),
                      bench::ScratchFile(common.dir, impl + "_" + value + ".dat")});
  };
  add("flowio", "policy", "even", {{"flowio_realm_policy", "even"}});
  add("flowio", "policy", "aligned",
      {{"flowio_realm_policy", "aligned"}, {"romio_cb_fr_alignment", alignment}});
  add("flowio", "policy", "persistent", {{"flowio_realm_policy", "persistent"}});
  add("flowio", "policy", "load_balanced", {{"flowio_realm_policy", "load_balanced"}});
  add("flowio", "policy", "datatype_stripe", {{"flowio_realm_stripe", stripe}});
  add("flowio", "policy", "datatype_step_share", {});
  // A step's region split evenly among the ranks, the same realms at
  // every step: stripes of one rank's share of a step.
  configurations.back().described_stripe = points * element;
  add("mpich", "hints", "default", {});
  if (romio_pfr) {
    add("mpich", "hints", "romio_cb_pfr", {{"romio_cb_pfr", "enable"}});
  } else {
    report.note("MPICH with romio_cb_pfr=enable skipped (--romio_pfr=1 runs it; ROMIO aborts)");
  }
  // MPICH with default hints, the first MPICH configuration.
  std::size_t baseline = 0;
  while (configurations[baseline].impl != "mpich") ++baseline;

  std::vector<std::vector<double>> seconds(configurations.size());
  for (int rep = 0; rep < common.reps; ++rep) {
    for (std::size_t c = 0; c < configurations.size(); ++c) {
      seconds[c].push_back(configurations[c].impl == "flowio"
                               ? run_flowio(configurations[c], layout)
                               : run_mpich(configurations[c], layout));
    }
  }

  const double total_bytes = static_cast<double>(steps * points * element * ranks);
  const double baseline_seconds = bench::median(seconds[baseline]);
  for (std::size_t c = 0; c < configurations.size(); ++c) {
    const Configuration& configuration = configurations[c];
    const std::string what = configuration.impl + " " + configuration.value + "'s file";
    for (const std::string reader : {"flowio", "mpich"}) {
      bench::verify_file(reader, configuration.file.path(), layout.all, stream, what);
    }
    bench::verify_same_size(configuration.file.path(), configurations[baseline].file.path(), what);
    const double median = bench::median(seconds[c]);
    bench::Fields line;
    line.add("steps", steps).add("points", points).add("element", element).add("sync", sync);
    line.add(configuration.key, configuration.value);
    if (configuration.value == "aligned") line.add("alignment", alignment);
    if (configuration.value == "datatype_stripe") line.add("stripe", stripe);
    report.line(line.add("impl", configuration.impl)
                    .add("op", "write")
                    .add("MiBps", total_bytes / 1048576.0 / median)
                    .add("seconds", median)
                    .add("ratio", baseline_seconds / median));
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_benchmark(argc, argv, "pfr", benchmark); }
