#!/bin/bash
# shellcheck disable=SC2046,SC2086  # pkg-config prints lists of flags, split on purpose
# Installs flowio into a fresh prefix and builds and runs programs against
# the installed copy the way a user would (README, "Install and build
# against flowio"), each on 2 ranks:
#   - app.cc (C++ API) through pkg-config, linked to libflowio.so;
#   - app.cc linked statically to libflowio.a (pkg-config --static);
#   - app.c (plain MPI-IO) linked to libflowio_mpiio.so through pkg-config,
#     linked statically to libflowio_mpiio.a, and built for MPICH alone and
#     run with the layer preloaded (by mpiexec -genv, and by LD_PRELOAD set
#     for mpiexec itself); each checks that its MPI_File_open really is the
#     layer's.
# The MPI-IO steps need the package //api/mpiio: skipped while it does not
# exist, a failure if it exists and the layer was not installed.
# Prints one summary line; exits nonzero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
source_dir=$PWD/tests/install
ranks=2

# A private TMPDIR: mpiexec, MPICH and the compilers leave files there, and
# all of it goes at exit with the prefix and the programs.
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/flowio_install_check.XXXXXX")
export TMPDIR
scratch=$(realpath "$(mktemp -d)")
prefix=$scratch/prefix
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# A hung run (a rank waiting on a collective the others never make) ends
# the step after this many seconds instead of the whole test suite.
export MPIEXEC_TIMEOUT=300

passed=()
current=""
finish() {
  local status=$?
  rm -rf "$TMPDIR"
  local list
  list=$(printf '%s, ' "${passed[@]}")
  list=${list%, }
  if [ "$status" -eq 0 ]; then
    echo "install check: passed (${list})"
  else
    echo "install check: FAILED at '${current}' (passed before it: ${list:-none})"
  fi
}
trap finish EXIT

# The functions below run as steps, where set -e does not apply (a step is
# a condition): each returns its first failure itself.

# step NAME COMMAND...: runs one step with its output in a log; shows the
# lines that tell what happened (what was installed, the programs' verdicts)
# or, when the step fails, the end of the log, and ends the check. Bazel's
# full build output would bury them.
step() {
  current=$1
  shift
  echo "== $current"
  local log="$scratch/step.log"
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" | sed 's/^/   /'
    exit 1
  fi
  grep -E '^(installed|install check)' "$log" | sed 's/^/   /' || true
  passed+=("$current")
}

# needs BINARY LIBRARY / lacks BINARY LIBRARY: whether BINARY records
# LIBRARY as NEEDED, which tells which copy of flowio a program uses.
# (readelf's output is read whole: grep -q quitting early would make it
# die of SIGPIPE, a failure under pipefail.)
needed_by() { readelf -d "$1" | grep NEEDED; }
needs() { [[ $(needed_by "$1") == *"[$2]"* ]] || { echo "$1 does not need $2"; return 1; }; }
lacks() { [[ $(needed_by "$1") != *"[$2]"* ]] || { echo "$1 needs $2"; return 1; }; }

# Runs a program on $ranks ranks in the scratch folder, where it writes.
run() { (cd "$scratch" && mpiexec -n "$ranks" "$@"); }

# run_bound BINARY [MPIEXEC ARGS...]: run, and fail unless the dynamic
# linker bound the program's MPI_File_open to the installed layer on every
# rank (LD_DEBUG writes one file per process); otherwise MPICH's own MPI-IO
# could pass the check unnoticed.
run_bound() {
  local binary=$1
  shift
  rm -f "$scratch"/bindings.*
  run -genv LD_DEBUG bindings -genv LD_DEBUG_OUTPUT "$scratch/bindings" "$@" "$binary" || return 1
  local bound
  bound=$(grep -l "to $prefix/lib/libflowio_mpiio.so .*MPI_File_open'" "$scratch"/bindings.* | wc -l)
  [ "$bound" -eq "$ranks" ] || { echo "MPI_File_open bound to the layer on $bound of $ranks ranks"; return 1; }
}

build_cxx_shared() {
  mpicxx -std=c++20 "$source_dir/app.cc" -o "$scratch/app_shared" \
    $(pkg-config --cflags --libs flowio) && needs "$scratch/app_shared" libflowio.so
}

# -l:libflowio.a makes the linker take the archive although libflowio.so
# sits next to it; Libs.private brings the system libraries it needs.
build_cxx_static() {
  local libs
  libs=$(pkg-config --static --libs flowio | sed 's/-lflowio\b/-l:libflowio.a/') || return 1
  mpicxx -std=c++20 "$source_dir/app.cc" -o "$scratch/app_static" \
    $(pkg-config --cflags flowio) $libs && lacks "$scratch/app_static" libflowio.so
}

check_layer_installed() {
  if [ ! -f "$prefix/lib/libflowio_mpiio.so" ] || [ ! -f "$PKG_CONFIG_PATH/flowio-mpiio.pc" ]; then
    echo "api/mpiio/BUILD exists but tools/install.sh did not install the layer"
    return 1
  fi
}

build_c_linked() {
  mpicc "$source_dir/app.c" -o "$scratch/app_c" $(pkg-config --libs flowio-mpiio) &&
    needs "$scratch/app_c" libflowio_mpiio.so
}

# The layer linked statically: the program itself defines MPI_File_open.
build_c_static() {
  local libs
  libs=$(pkg-config --static --libs flowio-mpiio | sed 's/-lflowio_mpiio\b/-l:libflowio_mpiio.a/') ||
    return 1
  mpicc "$source_dir/app.c" -o "$scratch/app_c_static" $libs &&
    lacks "$scratch/app_c_static" libflowio_mpiio.so || return 1
  if [[ $(nm "$scratch/app_c_static") != *" T MPI_File_open"$'\n'* ]]; then
    echo "app_c_static does not define MPI_File_open"
    return 1
  fi
}

# LD_PRELOAD set for mpiexec itself also loads the layer into mpiexec and
# its proxies, which must do them no harm; the ranks inherit it.
run_preloaded_everywhere() {
  LD_PRELOAD="$prefix/lib/libflowio_mpiio.so" run_bound "$scratch/app_c_mpich"
}

build_c_for_mpich() {
  mpicc "$source_dir/app.c" -o "$scratch/app_c_mpich" && lacks "$scratch/app_c_mpich" libflowio_mpiio.so
}

step install tools/install.sh "$prefix"
step "C++ shared build" build_cxx_shared
step "C++ shared run" run "$scratch/app_shared"
step "C++ static build" build_cxx_static
step "C++ static run" run "$scratch/app_static"
if [ ! -f api/mpiio/BUILD ]; then
  passed+=("MPI-IO layer skipped: no //api/mpiio yet")
  exit 0
fi
step "layer installed" check_layer_installed
step "C linked build" build_c_linked
step "C linked run" run_bound "$scratch/app_c"
step "C static build" build_c_static
step "C static run" run "$scratch/app_c_static"
step "C for MPICH build" build_c_for_mpich
step "C preloaded run" run_bound "$scratch/app_c_mpich" -genv LD_PRELOAD "$prefix/lib/libflowio_mpiio.so"
step "C preloaded into mpiexec too" run_preloaded_everywhere
