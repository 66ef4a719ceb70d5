// Differential test of collective calls against MPICH's MPI-IO: random
// open modes, views, hints, memory types and call sequences (collective
// calls, with some independent ones mixed in; set_view, set_size, sync and
// reopening between them), run through flowio on one file and through MPICH
// on another from the same background bytes; the files must end
// byte-identical and every call must return what MPICH's returned
// (differential_case.h says what a case draws and what it leaves out).
//
// FLOWIO_DIFF_CASES sets the number of cases (default 100; a fifth under
// FLOWIO_SANITIZER); FLOWIO_DIFF_SEED the base seed (default 20261207).
// Case i uses seed base + i; a failing case prints the one-line command
// that replays it alone. FLOWIO_DIFF_VERBOSE prints every case and the
// seconds each side took.
#include <doctest/doctest.h>

#include "tests/api/differential_run.h"

// Random open modes, views, hints, memory types and call sequences, several
// calls on one open file, some in flight together: files byte-identical to
// MPICH's, read counts, pointers and buffers identical to MPICH's.
TEST_CASE("Api.CollectiveDifferential.RandomCollectiveAccess") {
  using namespace flowio::testing;
  CaseShape shape;
  shape.collective_percent = 80;
  shape.scale_one_in = 25;  // now and then a view past 2^31 or 2^32 bytes
  run_differential_cases(differential_run(100, 20261207), shape, "cdiff",
                         "collective differential");
}
