#!/bin/bash
# Runs the differential tests against MPICH's MPI-IO over many random cases,
# outside the test suite:
#   tools/differential_sweep.sh collective|independent SEED CASES_1 CASES_2 CASES_4
# runs CASES_N cases on N ranks (1, 2, 4) from seed SEED, each rank count
# from its own range of seeds (SEED + 1000000 * N), and prints one summary
# line per rank count; a failing case prints its replay command. Exits
# nonzero if any case failed.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 5 ]; then
  echo "usage: $0 collective|independent SEED CASES_1 CASES_2 CASES_4" >&2
  exit 2
fi
case $1 in
  collective) binary=bazel-bin/tests/api/collective_differential_test_bin ;;
  independent) binary=bazel-bin/tests/api/differential_test_bin ;;
  *)
    echo "unknown kind $1" >&2
    exit 2
    ;;
esac
bazel build //tests/api:collective_differential_test_bin //tests/api:differential_test_bin \
  >/dev/null 2>&1 || {
  echo "build failed" >&2
  exit 1
}
seed=$2
shift 2
status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy, so that a build during the sweep does not change what it runs.
cp "$binary" "$work/test_binary"
for ranks in 1 2 4; do
  cases=$1
  shift
  [ "$cases" -gt 0 ] || continue
  log="$work/$ranks.log"
  # The test's files go in $TMPDIR under fixed names: a private one, or two
  # sweeps (or a sweep and a replay) on one machine write each other's files.
  (cd "$work" && TMPDIR="$work" FLOWIO_DIFF_SEED=$((seed + 1000000 * ranks)) FLOWIO_DIFF_CASES=$cases \
    mpiexec -n "$ranks" "$work/test_binary" >"$log" 2>&1) || status=1
  grep -E "cases: .* failed:|replay:" "$log" | sed "s/^/$ranks ranks: /"
  grep -q "failed: 0" "$log" || status=1
done
exit $status
