#!/bin/bash
# Runs a test binary under mpiexec: run_mpi_test.sh RANKS BINARY [ARGS...].
# Under --config=asan it passes the leak suppressions MPICH needs to every
# rank. The binary runs in $TEST_TMPDIR, where it writes its files.
set -euo pipefail
ranks=$1
shift
binary=$1
shift
env_args=()
if [ "${FLOWIO_SANITIZER:-}" = asan ]; then
  if [ -n "${TEST_SRCDIR:-}" ]; then
    supp="$TEST_SRCDIR/${TEST_WORKSPACE:-flowio}/tests/support/lsan_suppressions.txt"
  else
    supp="$(dirname "$(realpath "$0")")/lsan_suppressions.txt"
  fi
  env_args+=(-genv LSAN_OPTIONS "suppressions=${supp}:fast_unwind_on_malloc=0")
  env_args+=(-genv ASAN_OPTIONS "detect_leaks=1")
  env_args+=(-genv UBSAN_OPTIONS "print_stacktrace=1:halt_on_error=1")
fi
# Run from the scratch directory, so that relative paths land there.
binary=$(realpath "$binary")
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
cd "$TMPDIR"
exec mpiexec -n "$ranks" "${env_args[@]}" "$binary" "$@"
