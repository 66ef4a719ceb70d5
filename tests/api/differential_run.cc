#include "tests/api/differential_run.h"

#include <doctest/doctest.h>
#include <mpi.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>

#include "tests/api/kept_outcome.h"
#include "tests/api/test_paths.h"

namespace flowio::testing {
namespace {

// Sparse tiles with little data each can spread a case over tens of
// megabytes of file; such cases are drawn again, so that a case costs about
// the same everywhere (the background is written and compared whole).
// Cases at scale are sparse files on purpose: kept.
constexpr long long kMostFileBytes = 4 << 20;

// Where this rank's outcome of the case of `case_seed` is kept under `dir`.
std::string kept_path(const std::string& dir, std::uint64_t case_seed) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return dir + "/" + std::to_string(case_seed) + ".rank" + std::to_string(rank);
}

// Whether flowio's outcome equals the one kept from a long run, on every
// rank (a doctest check where it does not).
bool same_as_long_run(const std::string& dir, std::uint64_t case_seed, const CaseOutcome& outcome) {
  std::string why;
  int same = same_as_kept(kept_path(dir, case_seed), outcome, why) ? 1 : 0;
  CHECK_MESSAGE(same == 1, "flowio's outcome alone: " << why);
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return same == 1;
}

}  // namespace

void run_differential_cases(const DifferentialRun& run, const CaseShape& shape,
                            const std::string& name, const std::string& label) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string flowio_path = scratch_path(MPI_COMM_WORLD, name + "_flowio");
  const std::string mpich_path = scratch_path(MPI_COMM_WORLD, name + "_mpich");
  long failed_cases = 0;
  for (long index = run.first; index < run.first + run.cases; ++index) {
    const auto case_seed = static_cast<std::uint64_t>(run.seed + index);
    std::mt19937_64 shared(case_seed * 104729);
    std::mt19937_64 rng(case_seed * 7919 + static_cast<std::uint64_t>(rank));
    auto planned = std::make_unique<Case>();
    make_case(shared, rng, case_seed, shape, *planned);
    while (!planned->sparse && planned->file_end > kMostFileBytes) {
      planned = std::make_unique<Case>();
      make_case(shared, rng, case_seed, shape, *planned);
    }
    const Case& c = *planned;
    if (run.verbose) MESSAGE(c.description);

    CaseOutcome by_mpich(c.operation_count);
    const auto mpich_started = std::chrono::steady_clock::now();
    prepare_file(c, case_seed, mpich_path);
    run_mpich(c, case_seed, mpich_path, by_mpich);
    MPI_Barrier(MPI_COMM_WORLD);
    const std::chrono::duration<double> mpich_seconds =
        std::chrono::steady_clock::now() - mpich_started;
    for (long repetition = 0; repetition < run.repeat; ++repetition) {
      CaseOutcome by_flowio(c.operation_count), expected = by_mpich;
      const auto started = std::chrono::steady_clock::now();
      prepare_file(c, case_seed, flowio_path);
      run_flowio(c, case_seed, flowio_path, by_flowio);
      MPI_Barrier(MPI_COMM_WORLD);
      if (run.verbose && rank == 0) {
        const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
        MESSAGE("case " << index << (run.repeat > 1 ? " run " + std::to_string(repetition) : "")
                        << ": flowio " << seconds.count() << " s, MPICH " << mpich_seconds.count()
                        << " s, file " << c.file_end << " bytes");
      }
      bool passed = compare_outcomes(c, case_seed, index, mpich_path, by_flowio, expected);
      if (!run.expect_dir.empty()) {
        passed = same_as_long_run(run.expect_dir, case_seed, by_flowio) && passed;
      }
      if (!passed && !run.keep_dir.empty())
        keep_outcome(kept_path(run.keep_dir, case_seed), by_flowio);
      if (!passed) ++failed_cases;
    }
  }
  if (rank == 0) {
    MESSAGE(label << " cases: " << run.cases << " from seed " << run.seed << " (first " << run.first
                  << "), failed: " << failed_cases
                  << (run.repeat > 1 ? " runs of " + std::to_string(run.cases * run.repeat) : ""));
  }
}

}  // namespace flowio::testing
