// Differential test of independent calls against MPICH's MPI-IO: random
// open modes, views, memory types and call sequences of independent reads
// and writes (blocking, several nonblocking in flight, at explicit offsets
// or through the file pointer; set_view, set_size, sync and reopening
// between them), run through flowio on one file and through MPICH on
// another from the same background bytes; the files must end
// byte-identical and every call must return what MPICH's returned
// (differential_case.h says what a case draws and what it leaves out).
//
// FLOWIO_DIFF_CASES sets the number of cases (default 150; a fifth under
// --config=asan); FLOWIO_DIFF_SEED the base seed (default 20261125). Case i
// uses seed base + i; a failing case prints the one-line command that
// replays it alone.
#include <doctest/doctest.h>
#include <mpi.h>

#include <memory>
#include <string>

#include "tests/api/differential_case.h"
#include "tests/api/differential_run.h"
#include "tests/api/test_paths.h"

namespace {

constexpr long long kMostFileBytes = 4 << 20;

}  // namespace

// Random views, memory types, open modes and call sequences: files
// byte-identical to MPICH's, reads identical to MPICH's.
TEST_CASE("Api.Differential.RandomIndependentAccess") {
  using namespace flowio::testing;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const DifferentialRun run = differential_run(150, 20261125);
  const std::string flowio_path = scratch_path(MPI_COMM_WORLD, "diff_flowio");
  const std::string mpich_path = scratch_path(MPI_COMM_WORLD, "diff_mpich");
  CaseShape shape;
  shape.collective_percent = 0;
  long failed_cases = 0;
  for (long index = run.first; index < run.first + run.cases; ++index) {
    const auto case_seed = static_cast<std::uint64_t>(run.seed + index);
    std::mt19937_64 shared(case_seed * 104729);
    std::mt19937_64 rng(case_seed * 7919 + static_cast<std::uint64_t>(rank));
    auto planned = std::make_unique<Case>();
    make_case(shared, rng, case_seed, shape, *planned);
    while (planned->file_end > kMostFileBytes) {
      planned = std::make_unique<Case>();
      make_case(shared, rng, case_seed, shape, *planned);
    }
    const Case& c = *planned;
    if (run.verbose) MESSAGE(c.description);
    CaseOutcome by_flowio(c.operation_count), by_mpich(c.operation_count);
    prepare_file(c, case_seed, flowio_path);
    run_flowio(c, case_seed, flowio_path, by_flowio);
    prepare_file(c, case_seed, mpich_path);
    run_mpich(c, case_seed, mpich_path, by_mpich);
    if (!compare_outcomes(c, case_seed, index, mpich_path, by_flowio, by_mpich)) ++failed_cases;
  }
  if (rank == 0) {
    MESSAGE("differential cases: " << run.cases << " from seed " << run.seed << " (first "
                                   << run.first << "), failed: " << failed_cases);
  }
}
