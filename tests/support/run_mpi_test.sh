#!/bin/bash
# Runs a test binary under mpiexec: run_mpi_test.sh RANKS BINARY [ARGS...].
# Under --config=asan it passes the leak suppressions MPICH needs to every
# rank. The binary runs in $TEST_TMPDIR, where it writes its files.
# FLOWIO_TEST_LAUNCHER, if set, replaces mpiexec: its words, then the same
# -n and -genv arguments and the program (e.g. "/path/tools/netbed.sh
# --hosts 2 --" runs the ranks split over two network namespaces).
# A hung job ends before Bazel's timeout (TEST_TIMEOUT seconds) with the
# test case and operation under way named (set_run_deadlines).
set -euo pipefail
ranks=$1
shift
binary=$1
shift
# Under Bazel this script runs under each test's name in the test's own
# package, so its neighbour is found through the runfiles root; outside
# Bazel, next to it.
support=${TEST_SRCDIR:+$TEST_SRCDIR/${TEST_WORKSPACE:-flowio}/tests/support}
source "${support:-$(dirname "$0")}/mpi_runner_setup.sh"
set_run_deadlines "${TEST_TIMEOUT:-300}"
# Run from the scratch directory, so that relative paths land there.
binary=$(realpath "$binary")
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
cd "$TMPDIR"
exec "${mpi_launcher[@]}" -n "$ranks" "${env_args[@]}" "$binary" "$@"
