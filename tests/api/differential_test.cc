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
// replays it alone. FLOWIO_DIFF_VERBOSE prints every case and the seconds
// each side took.
#include <doctest/doctest.h>

#include "tests/api/differential_run.h"

// Random views, memory types, open modes and call sequences: files
// byte-identical to MPICH's, reads identical to MPICH's.
TEST_CASE("Api.Differential.RandomIndependentAccess") {
  using namespace flowio::testing;
  CaseShape shape;
  shape.collective_percent = 0;
  shape.scale_one_in = 25;  // now and then a view past 2^31 or 2^32 bytes
  run_differential_cases(differential_run(150, 20261125), shape, "diff", "differential");
}
