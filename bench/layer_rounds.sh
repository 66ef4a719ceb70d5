# Sourced first by bench/hdf5.sh and bench/preload.sh, which run an
# unmodified MPI-IO program on MPICH's MPI-IO and with flowio's layer
# preloaded. It sets the strict mode they run in and makes the repository
# root their working folder.
#
# layer_rounds TARGET RANKS ROUNDS OUTPUT_NAME [PROGRAM ARGS...]: builds
# //bench:TARGET and the layer, then runs the program ROUNDS times on each
# side, alternately, on RANKS ranks; each run's first argument is its
# file, $scratch/mpich.OUTPUT_NAME or $scratch/flowio.OUTPUT_NAME, and its
# output is appended to $scratch/mpich.txt or $scratch/flowio.txt. Fails
# unless the layer served the calls (FLOWIO_MPIIO_REPORT=1). $scratch is a
# folder removed at exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT

layer_rounds() {
  local target=$1 ranks=$2 rounds=$3 output=$4
  shift 4
  bazel build //bench:"${target}" //api/mpiio:libflowio_mpiio.so >/dev/null 2>&1
  local program layer
  program=$(bazel info bazel-bin 2>/dev/null)/bench/${target}
  layer=$(bazel info bazel-bin 2>/dev/null)/api/mpiio/libflowio_mpiio.so
  for _ in $(seq "${rounds}"); do
    mpiexec -n "${ranks}" "${program}" "${scratch}/mpich.${output}" "$@" >>"${scratch}/mpich.txt"
    mpiexec -n "${ranks}" -genv LD_PRELOAD "${layer}" -genv FLOWIO_MPIIO_REPORT 1 \
      "${program}" "${scratch}/flowio.${output}" "$@" >>"${scratch}/flowio.txt" \
      2>>"${scratch}/flowio.err"
  done
  grep -q "flowio-mpiio: served [1-9]" "${scratch}/flowio.err" || {
    echo "the layer did not serve the calls" >&2
    return 1
  }
}

# field KEY: the value of KEY=... on each line of stdin that has one.
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
