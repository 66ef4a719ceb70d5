#!/bin/bash
# Runs an MPI-IO program with flowio's MPI-IO layer preloaded, alone:
#   run_with_layer.sh RANKS PROGRAM LAYER_SO [PROGRAM_ARGS...]
# For programs whose calls MPICH's own MPI-IO crashes on, hangs on or gets
# wrong, so that no run without the layer can be compared: the program
# checks its own results. The test fails if the program exits nonzero or
# if the layer did not serve it (its FLOWIO_MPIIO_REPORT line). The
# program's output directory (its argv[1]) is under $TEST_TMPDIR.
set -euo pipefail
ranks=$1
program=$(realpath "$2")
layer=$(realpath "$3")
shift 3
name=$(basename "$program")
work=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/$name.$ranks.XXXXXX")
mkdir -p "$work/out"

# From the runfiles under Bazel, from the source tree otherwise.
source "$(dirname "$0")/../support/mpi_runner_setup.sh"

# A hung job ends before Bazel's timeout with the step under way named
# (the one run has all of it).
set_run_deadlines "${TEST_TIMEOUT:-300}"

# An ASan-built program needs the ASan runtime before the preloaded layer.
preload=$(layer_preload "$program" "$layer")

status=0
(cd "$work" && "${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} -genv LD_PRELOAD "$preload" \
  -genv FLOWIO_MPIIO_REPORT 1 "$program" "$work/out" "$@" >"$work/stdout" 2>"$work/stderr") ||
  status=$?
cat "$work/stdout"
if [ "$status" -ne 0 ]; then
  echo "FAIL: $name on $ranks ranks exited with status $status; its stderr:"
  cat "$work/stderr"
  exit 1
fi
if ! grep -Eq 'flowio-mpiio: served [1-9]' "$work/stderr"; then
  echo "FAIL: the layer did not serve $name; its stderr:"
  cat "$work/stderr"
  exit 1
fi
grep -E 'flowio-mpiio: served' "$work/stderr" | head -n 1
echo "PASS: $name on $ranks ranks with the layer"
