# Sourced by the mpiexec test runners (run_mpi_test.sh, the tests/mpiio,
# tests/hdf5, tests/remap and tests/durability scripts). Sets:
# - mpi_launcher: the words that start an MPI job, `mpiexec` unless
#   FLOWIO_TEST_LAUNCHER gives others; they are followed by mpiexec's own
#   -n / -genv arguments and the program (e.g. "/path/tools/netbed.sh
#   --hosts 2 --rate none --" runs every rank split over two network
#   namespaces, MPI traffic over TCP: no shared memory between them).
# - env_args: the -genv arguments every rank needs under --config=asan: the
#   leak suppressions MPICH needs, leak detection, UBSan stack traces; empty
#   otherwise. Finds lsan_suppressions.txt next to this file, in the
#   runfiles under Bazel.
# - set_run_deadlines, layer_preload and fresh_work_dir, below.
read -ra mpi_launcher <<<"${FLOWIO_TEST_LAUNCHER:-mpiexec}"
env_args=()
if [ "${FLOWIO_SANITIZER:-}" = asan ]; then
  # An absolute path: the ranks run in another folder.
  supp="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan_suppressions.txt"
  env_args+=(-genv LSAN_OPTIONS "suppressions=${supp}:fast_unwind_on_malloc=0")
  env_args+=(-genv ASAN_OPTIONS "detect_leaks=1")
  env_args+=(-genv UBSAN_OPTIONS "print_stacktrace=1:halt_on_error=1")
fi

# set_run_deadlines SECONDS: a hung job (a collective that one rank never
# joins) must end within SECONDS, its share of Bazel's timeout, which would
# only say "TIMEOUT": at 90% of it every rank's watchdog
# (FLOWIO_TEST_DEADLINE: test_progress.h, or t_init in mpiio_test.h)
# prints the step under way and ends the job; at 95% mpiexec's own timeout
# (MPIEXEC_TIMEOUT) ends a job whose ranks cannot even print. Values the
# environment already sets are kept.
set_run_deadlines() {
  export FLOWIO_TEST_DEADLINE=${FLOWIO_TEST_DEADLINE:-$(($1 * 90 / 100))}
  export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-$(($1 * 95 / 100))}
}

# layer_preload PROGRAM LAYER: prints the LD_PRELOAD value that puts LAYER
# under PROGRAM. An ASan-built program needs the ASan runtime first among
# the libraries; a preloaded library would otherwise come before it. awk
# reads all of ldd's output: quitting at the first match would let ldd die
# of SIGPIPE, and under pipefail + errexit that would end the caller.
layer_preload() {
  local asan_runtime
  asan_runtime=$( (ldd "$1"; ldd "$2") | awk '/libasan\.so/ && !found {print $3; found = 1}')
  if [ -n "$asan_runtime" ]; then
    echo "$asan_runtime $2"
  else
    echo "$2"
  fi
}

# fresh_work_dir NAME: prints an empty folder for a test's files:
# $TEST_TMPDIR/NAME under Bazel (emptied of an earlier run's), else a new
# one under $TMPDIR.
fresh_work_dir() {
  if [ -n "${TEST_TMPDIR:-}" ]; then
    rm -rf "${TEST_TMPDIR:?}/$1"
    mkdir -p "$TEST_TMPDIR/$1"
    echo "$TEST_TMPDIR/$1"
  else
    mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX"
  fi
}
