# Sourced by the mpiexec test runners (run_mpi_test.sh,
# tests/mpiio/run_with_and_without_layer.sh). Sets the array env_args to the
# -genv arguments every rank needs under --config=asan: the leak
# suppressions MPICH needs, leak detection, UBSan stack traces; empty
# otherwise. Finds lsan_suppressions.txt next to this file, in the runfiles
# under Bazel.
env_args=()
if [ "${FLOWIO_SANITIZER:-}" = asan ]; then
  if [ -n "${TEST_SRCDIR:-}" ]; then
    supp="$TEST_SRCDIR/${TEST_WORKSPACE:-flowio}/tests/support/lsan_suppressions.txt"
  else
    supp="$(dirname "$(realpath "${BASH_SOURCE[0]}")")/lsan_suppressions.txt"
  fi
  env_args+=(-genv LSAN_OPTIONS "suppressions=${supp}:fast_unwind_on_malloc=0")
  env_args+=(-genv ASAN_OPTIONS "detect_leaks=1")
  env_args+=(-genv UBSAN_OPTIONS "print_stacktrace=1:halt_on_error=1")
fi

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
