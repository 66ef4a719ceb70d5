// The collective differential test (tests/api/collective_differential_test)
// wide and at scale: random cases against MPICH's MPI-IO on 8 ranks, one
// in three with a view past 2^31 or 2^32 bytes on a sparse file
// (tests/api/differential_case.h says what such a case draws).
//
// FLOWIO_DIFF_CASES, FLOWIO_DIFF_SEED (default 20261128), FLOWIO_DIFF_FIRST
// and FLOWIO_DIFF_VERBOSE as for the other differential tests.
#include <doctest/doctest.h>

#include "tests/api/differential_run.h"

TEST_CASE("Scale.Differential.WideAndAtScale") {
  using namespace flowio::testing;
  CaseShape shape;
  shape.collective_percent = 80;
  shape.scale_one_in = 3;
  run_differential_cases(differential_run(6, 20261128), shape, "sdiff", "scale differential");
}
