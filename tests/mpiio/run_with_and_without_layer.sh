#!/bin/bash
# Runs an unmodified MPI-IO program three times and compares the runs:
#   run_with_and_without_layer.sh RANKS PROGRAM LAYER_SO
# against MPICH's own MPI-IO (plain), with flowio's MPI-IO layer preloaded
# (LD_PRELOAD=LAYER_SO), which takes over the MPI_File_* calls, and
# preloaded but switched off (FLOWIO_MPIIO=off), when it must forward every
# call. Each run gets its own output directory (the program's argv[1]).
# The test fails if a run exits nonzero, if stdouts differ, if runs leave
# different sets of files, if a file differs (files named nondet_* are
# compared by name only: their content legitimately depends on the order in
# which ranks ran), or if the line the layer prints at MPI_Finalize with
# FLOWIO_MPIIO_REPORT=1 ("flowio-mpiio: served N file calls, forwarded M")
# does not show N > 0 in the layer run and N = 0 when switched off (proof
# of who served the program), or shows the layer still holding datatypes
# it duplicated ("datatypes kept K", K > 0) at MPI_Finalize.
#
# SKIP_SWITCHED_OFF=1 leaves out the switched-off run: for programs that
# move GiBs, whose third run would cost as much as the other two while the
# forwarding is what every other program's third run checks.
#
# RUN_PLAIN_ONLY=1 replaces the layered run by a second plain run (LAYER_SO
# is then not needed): for developing tests before the layer exists, and to
# check that a test's stdout and files are deterministic at all.
#
# Under --config=asan (FLOWIO_SANITIZER=asan) every rank gets the leak
# suppressions MPICH needs (tests/support/mpi_runner_setup.sh).
#
# FLOWIO_TEST_LAUNCHER, if set, replaces mpiexec (as in
# tests/support/run_mpi_test.sh): its words, then -n and -genv arguments
# and the program.
set -euo pipefail

if [ $# -ne 3 ] && ! { [ $# -eq 2 ] && [ "${RUN_PLAIN_ONLY:-0}" = 1 ]; }; then
  echo "usage: $0 RANKS PROGRAM LAYER_SO" >&2
  exit 2
fi
ranks=$1
program=$(realpath "$2")
plain_only=${RUN_PLAIN_ONLY:-0}
layer=""
if [ "$plain_only" != 1 ]; then
  layer=$(realpath "$3")
  if [ ! -f "$layer" ]; then
    echo "FAIL: layer $3 not found" >&2
    exit 1
  fi
fi
name=$(basename "$program")

# From the runfiles under Bazel, from the source tree otherwise.
source "$(dirname "$0")/../support/mpi_runner_setup.sh"
work=$(fresh_work_dir "mpiio_$name.$ranks")

# A hung job ends before Bazel's timeout (TEST_TIMEOUT, for all three
# runs) with the step under way named: each run gets under a third of it.
set_run_deadlines $((${TEST_TIMEOUT:-300} * 95 / 100 / 3))

# run LABEL [MPIEXEC_ARGS...]: runs the program in $work/LABEL with its
# output directory $work/LABEL/out; records stdout, stderr and the status.
run() {
  local label=$1
  shift
  mkdir -p "$work/$label/out"
  local status=0
  (cd "$work/$label" &&
    "${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} "$@" "$program" "$work/$label/out" \
      >"$work/$label/stdout" 2>"$work/$label/stderr") || status=$?
  echo "$status" >"$work/$label/status"
}

show_stderr() {
  local label
  for label in "$@"; do
    echo "---- stderr of the $label run ----"
    cat "$work/$label/stderr"
  done
}

run plain
if [ "$plain_only" = 1 ]; then
  others=(plain_again)
  run plain_again
else
  # The layer run, and the same preload with FLOWIO_MPIIO=off, where the
  # layer must forward every call to MPICH's MPI-IO.
  others=(layer)
  preload=$(layer_preload "$program" "$layer")
  run layer -genv LD_PRELOAD "$preload" -genv FLOWIO_MPIIO_REPORT 1
  if [ "${SKIP_SWITCHED_OFF:-0}" != 1 ]; then
    others+=(switched_off)
    run switched_off -genv LD_PRELOAD "$preload" -genv FLOWIO_MPIIO_REPORT 1 -genv FLOWIO_MPIIO off
  fi
fi

if [ -n "${FLOWIO_TEST_LAUNCHER:-}" ]; then
  # What the launcher said about where it ran the ranks (its first line).
  for label in plain "${others[@]}"; do
    echo "$label run launched by $FLOWIO_TEST_LAUNCHER: $(head -n 1 "$work/$label/stderr")"
  done
fi

echo "==== $name on $ranks ranks: stdout of the plain run ===="
cat "$work/plain/stdout"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

status=$(cat "$work/plain/status")
[ "$status" = 0 ] || fail "the plain run exited with status $status"
(cd "$work/plain/out" && find . -type f | LC_ALL=C sort) >"$work/plain.files"

# compare_with_plain LABEL: the run LABEL succeeded, printed what the plain
# run printed, and left the same files with the same bytes.
compare_with_plain() {
  local other=$1 status compared=0 file
  status=$(cat "$work/$other/status")
  [ "$status" = 0 ] || fail "the $other run exited with status $status"
  if ! diff -u "$work/plain/stdout" "$work/$other/stdout" >"$work/$other.stdout.diff"; then
    fail "stdout of the plain and the $other runs differ:"
    cat "$work/$other.stdout.diff"
  fi
  (cd "$work/$other/out" && find . -type f | LC_ALL=C sort) >"$work/$other.files"
  if ! diff -u "$work/plain.files" "$work/$other.files" >"$work/$other.files.diff"; then
    fail "the plain and the $other runs left different files:"
    cat "$work/$other.files.diff"
  fi
  while IFS= read -r file; do
    case "$(basename "$file")" in
      nondet_*) continue ;;
    esac
    if [ -f "$work/$other/out/$file" ]; then
      compared=$((compared + 1))
      if ! cmp "$work/plain/out/$file" "$work/$other/out/$file"; then
        fail "file $file differs between the plain and the $other runs"
      fi
    fi
  done <"$work/plain.files"
  echo "$other: compared $compared output files byte for byte ($(wc -l <"$work/plain.files") files in all)"
}

for other in "${others[@]}"; do
  compare_with_plain "$other"
done

# The layer's own report (FLOWIO_MPIIO_REPORT=1) proves who served the calls.
expect_report() {
  local label=$1 pattern=$2 meaning=$3
  if ! grep -Eq "$pattern" "$work/$label/stderr"; then
    fail "the $label run's stderr lacks '$pattern': $meaning"
  else
    grep -E 'flowio-mpiio: served' "$work/$label/stderr" | head -n 1 | sed "s/^/$label: /"
  fi
}
if [ "$plain_only" != 1 ]; then
  expect_report layer 'flowio-mpiio: served [1-9]' "the layer did not serve the program"
  expect_report layer 'datatypes kept 0,' "the layer did not free every datatype it duplicated"
  if [ "${SKIP_SWITCHED_OFF:-0}" != 1 ]; then
    expect_report switched_off 'flowio-mpiio: served 0 file calls, forwarded [1-9]' \
      "FLOWIO_MPIIO=off did not make the layer forward every call"
  fi
fi

if [ "$failures" -ne 0 ]; then
  show_stderr plain "${others[@]}"
  echo "($failures failures; the runs are in $work)"
  exit 1
fi
echo "PASS: $name on $ranks ranks, plain and ${others[*]} runs agree"
if [ -z "${TEST_TMPDIR:-}" ]; then
  rm -rf "$work"
fi
