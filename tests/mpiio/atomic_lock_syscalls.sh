#!/bin/bash
# Proves which locks atomic mode takes under the MPI-IO layer, from the
# system calls (strace -f -e trace=fcntl over the whole job):
#   atomic_lock_syscalls.sh RANKS PROGRAM LAYER_SO
# PROGRAM (zeros_ones.c) turns atomic mode on and reads and writes.
#   - MPICH's own MPI-IO takes fcntl locks (proof that strace sees them);
#   - the layer, by default, takes none: its locks are flowio's own;
#   - the layer with the hint flowio_lock=fcntl takes fcntl (OFD) locks.
# Each run must succeed (the program checks its reads itself). Sieve locks
# (io/sieve_lock.h: offsets 2^62 + the extent), which guard data sieving in
# every mode as ROMIO's data sieving locks do, are not atomic mode's locks
# and are not counted.
set -euo pipefail
ranks=$1
program=$(realpath "$2")
layer=$(realpath "$3")

# From the runfiles under Bazel, from the source tree otherwise.
source "$(dirname "$0")/../support/mpi_runner_setup.sh"
work=$(fresh_work_dir atomic_lock_syscalls)
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}

preload=$(layer_preload "$program" "$layer")

# lock_calls STRACE_OUTPUT: the lock commands (F_SETLK, F_SETLKW,
# F_OFD_SETLK, F_OFD_SETLKW) on the file's bytes, below 2^62.
lock_calls() {
  grep -E 'F_(OFD_)?SETLKW?' "$1" |
    awk -F'l_start=' '{ split($2, start, ","); if (start[1] + 0 < 4611686018427387904) calls++ }
      END { print calls + 0 }'
}

# trace LABEL [MPIEXEC_ARGS...]: runs the program under strace; prints the
# number of lock commands on the file's bytes the whole job issued.
trace() {
  local label=$1
  shift
  mkdir -p "$work/$label/out"
  # LeakSanitizer cannot run under ptrace (the last -genv wins): off here.
  if ! (cd "$work/$label" && strace -f -qq -e trace=fcntl -o "$work/$label/strace" \
    "${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} -genv ASAN_OPTIONS detect_leaks=0 \
    "$@" "$program" "$work/$label/out" \
    >"$work/$label/stdout" 2>"$work/$label/stderr"); then
    echo "FAIL: the $label run failed" >&2
    cat "$work/$label/stdout" "$work/$label/stderr" >&2
    exit 1
  fi
  lock_calls "$work/$label/strace"
}

plain=$(trace plain)
layer_default=$(trace layer -genv LD_PRELOAD "$preload")
layer_fcntl=$(trace layer_fcntl -genv LD_PRELOAD "$preload" -genv FLOWIO_TEST_LOCK fcntl)
echo "fcntl lock calls: MPICH's MPI-IO $plain, layer (default lock) $layer_default," \
  "layer with flowio_lock=fcntl $layer_fcntl"

failures=0
if [ "$plain" -eq 0 ]; then
  echo "FAIL: strace saw no lock call even from MPICH's MPI-IO: the check cannot see them"
  failures=$((failures + 1))
fi
if [ "$layer_default" -ne 0 ]; then
  echo "FAIL: the layer took fcntl locks without being asked:"
  grep -E 'F_(OFD_)?SETLKW?' "$work/layer/strace" | head -5
  failures=$((failures + 1))
fi
if ! grep -qE 'F_OFD_SETLKW?' "$work/layer_fcntl/strace"; then
  echo "FAIL: with flowio_lock=fcntl the layer took no fcntl lock"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || exit 1
echo "PASS"
[ -z "${TEST_TMPDIR:-}" ] && rm -rf "$work"
exit 0
