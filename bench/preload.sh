#!/bin/bash
# The MPI-IO layer on an unmodified program: runs bench/preload_checkpoint
# alternately on MPICH's MPI-IO and with flowio's layer preloaded
# (`mpiexec -genv LD_PRELOAD=...`), ROUNDS times each, compares the two
# files byte for byte, and prints the median bandwidths and their ratio
# (flowio / MPICH). From anywhere:
#
#   bench/preload.sh [ranks=2] [n=256] [reps per run=3] [rounds=5]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2}
n=${2:-256}
reps=${3:-3}
rounds=${4:-5}
bazel build -c opt //bench:preload_checkpoint //api/mpiio:libflowio_mpiio.so >/dev/null 2>&1
program=bazel-out/k8-opt/bin/bench/preload_checkpoint
layer=$(pwd)/bazel-out/k8-opt/bin/api/mpiio/libflowio_mpiio.so
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

for round in $(seq "${rounds}"); do
  mpiexec -n "${ranks}" "${program}" "${scratch}/mpich.dat" "${n}" "${reps}" >>"${scratch}/mpich.txt"
  mpiexec -n "${ranks}" -genv LD_PRELOAD="${layer}" -genv FLOWIO_MPIIO_REPORT=1 \
    "${program}" "${scratch}/flowio.dat" "${n}" "${reps}" >>"${scratch}/flowio.txt" \
    2>>"${scratch}/flowio.err"
done
grep -q "flowio-mpiio: served [1-9]" "${scratch}/flowio.err" || {
  echo "the layer did not serve the calls" >&2
  exit 1
}
cmp "${scratch}/mpich.dat" "${scratch}/flowio.dat"
echo "ranks=${ranks} n=${n} MiB=$((n * n * n * 8 / 1048576)) rounds=${rounds} files=identical"
for direction in write read; do
  mpich=$(field "${direction}_MiBps" <"${scratch}/mpich.txt" | median)
  flowio=$(field "${direction}_MiBps" <"${scratch}/flowio.txt" | median)
  echo "${direction}: mpich_MiBps=${mpich} flowio_MiBps=${flowio} ratio=$(awk "BEGIN {printf \"%.2f\", ${flowio} / ${mpich}}")"
done
