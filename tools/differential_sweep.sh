#!/bin/bash
# Runs the differential tests against MPICH's MPI-IO over many random cases,
# outside the test suite:
#   tools/differential_sweep.sh collective|independent SEED CASES_1 CASES_2 CASES_4
# runs CASES_N cases on N ranks (1, 2, 4) from seed SEED, each rank count
# from its own range of seeds (SEED + 1000000 * N), and prints one summary
# line per rank count; a failing case prints its replay command, and a run
# with failures keeps its whole output in a file it names. A run that
# prints nothing for FLOWIO_SWEEP_STALL_SECONDS (default 180) has hung: the
# sweep keeps its last case and every rank's stacks in a file it names, and
# stops that run. A case that failed is run again alone, in a fresh
# process: MPICH's MPI-IO in one long-lived process can go wrong late in a
# run (tests/api/kept_outcome.h), so a failing case is not counted when,
# alone, flowio's outcome equals its outcome in the long run byte for byte
# and agrees with MPICH's; the sweep says so for each such case. Exits
# nonzero if any other case failed, or a run hung.
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
# A rank count's run that prints nothing for this long has hung.
stall_seconds=${FLOWIO_SWEEP_STALL_SECONDS:-180}
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
  # Verbose: a line per case, so that a sweep that stops printing has hung.
  kept="$work/kept.$ranks"
  mkdir -p "$kept"
  (cd "$work" && TMPDIR="$work" FLOWIO_DIFF_VERBOSE=1 FLOWIO_DIFF_SEED=$((seed + 1000000 * ranks)) \
    FLOWIO_DIFF_CASES=$cases FLOWIO_DIFF_KEEP_DIR="$kept" \
    mpiexec -n "$ranks" "$work/test_binary" >"$log" 2>&1) &
  run=$!
  quiet=0 size=0
  while kill -0 "$run" 2>/dev/null; do
    sleep 10
    now=$(stat -c %s "$log")
    if [ "$now" -ne "$size" ]; then
      size=$now quiet=0
      continue
    fi
    quiet=$((quiet + 10))
    [ "$quiet" -ge "$stall_seconds" ] || continue
    # Hung: the last case started, what each rank said it threw, every
    # rank's stacks (where gdb is installed), kept for whoever looks next.
    hang_file=$(mktemp "${TMPDIR:-/tmp}/flowio-sweep-hang.XXXXXX")
    {
      echo "$ranks ranks: no output for $quiet s"
      grep -E "MESSAGE: seed" "$log" | tail -n 1
      grep -E "flowio threw" "$log"
      for pid in $(pgrep -f "^$work/test_binary"); do
        echo "=== rank process $pid"
        command -v gdb >/dev/null && gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1
      done
    } >"$hang_file"
    echo "$ranks ranks: HUNG; the last case, the ranks' stacks: $hang_file"
    pkill -9 -f "^$work/test_binary"
    break
  done
  wait "$run"
  run_status=$?
  grep -E "cases: .* failed:|replay:" "$log" | sed "s/^/$ranks ranks: /"
  failed=$(grep -oE "cases: .* failed: [0-9]+" "$log" | grep -oE "[0-9]+$")
  cleared=0
  for case_seed in $(grep -oE "replay: FLOWIO_DIFF_SEED=[0-9]+" "$log" | grep -oE "[0-9]+$"); do
    alone="$work/alone.$ranks.$case_seed.log"
    (cd "$work" && TMPDIR="$work" FLOWIO_DIFF_SEED=$case_seed FLOWIO_DIFF_FIRST=0 \
      FLOWIO_DIFF_CASES=1 FLOWIO_DIFF_EXPECT_DIR="$kept" \
      timeout "$stall_seconds" mpiexec -n "$ranks" "$work/test_binary" >"$alone" 2>&1)
    if [ $? -eq 0 ] && grep -q "failed: 0" "$alone"; then
      cleared=$((cleared + 1))
      echo "$ranks ranks: the case of seed $case_seed differed late in the run only: alone," \
        "flowio's outcome equals its long-run outcome and agrees with MPICH's (not counted)"
    else
      kept_log=$(mktemp "${TMPDIR:-/tmp}/flowio-sweep-alone.XXXXXX")
      cp "$alone" "$kept_log"
      echo "$ranks ranks: the case of seed $case_seed fails alone too: $kept_log"
    fi
  done
  if [ -z "$failed" ] || [ "$failed" -ne "$cleared" ] || { [ "$run_status" -ne 0 ] && [ "$failed" -eq 0 ]; }; then
    status=1
    # The whole run, kept: each failing case's checks and messages, which
    # a replay on a quieter machine may not show again.
    failed_log=$(mktemp "${TMPDIR:-/tmp}/flowio-sweep-failed.XXXXXX")
    cp "$log" "$failed_log"
    echo "$ranks ranks: the run's whole output: $failed_log"
  fi
done
exit $status
