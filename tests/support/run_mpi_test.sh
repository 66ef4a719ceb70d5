#!/bin/bash
# Runs a test binary under mpiexec: run_mpi_test.sh RANKS BINARY [ARGS...].
# Under --config=asan it passes the leak suppressions MPICH needs to every
# rank. The binary runs in $TEST_TMPDIR, where it writes its files.
# FLOWIO_TEST_LAUNCHER, if set, replaces mpiexec: its words, then the same
# -n and -genv arguments and the program (e.g. "/path/tools/netbed.sh
# --hosts 2 --" runs the ranks split over two network namespaces).
#
# A hung job must end before Bazel's timeout (TEST_TIMEOUT seconds), which
# would only say "TIMEOUT": at 90% of it each rank's watchdog
# (test_progress.h, FLOWIO_TEST_DEADLINE) prints the test case and the
# operation under way and aborts the job; at 95% mpiexec's own timeout
# (MPIEXEC_TIMEOUT) ends a job whose ranks cannot even print.
set -euo pipefail
ranks=$1
shift
binary=$1
shift
if [ -n "${TEST_SRCDIR:-}" ]; then
  support="$TEST_SRCDIR/${TEST_WORKSPACE:-flowio}/tests/support"
else
  support="$(dirname "$(realpath "$0")")"
fi
source "$support/mpi_runner_setup.sh"
bazel_timeout=${TEST_TIMEOUT:-300}
export FLOWIO_TEST_DEADLINE=${FLOWIO_TEST_DEADLINE:-$((bazel_timeout * 90 / 100))}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-$((bazel_timeout * 95 / 100))}
# Run from the scratch directory, so that relative paths land there.
binary=$(realpath "$binary")
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
cd "$TMPDIR"
exec "${mpi_launcher[@]}" -n "$ranks" "${env_args[@]}" "$binary" "$@"
