#!/bin/bash
# The MPI-IO layer on an unmodified program: runs bench/preload_checkpoint
# alternately on MPICH's MPI-IO and with flowio's layer preloaded
# (`mpiexec -genv LD_PRELOAD=...`), ROUNDS times each, compares the two
# files byte for byte, and prints the median bandwidths and their ratio
# (flowio / MPICH). From anywhere:
#
#   bench/preload.sh [ranks=2] [n=256] [reps per run=3] [rounds=5]
source "$(dirname "$0")/layer_rounds.sh"
ranks=${1:-2}
n=${2:-256}
reps=${3:-3}
rounds=${4:-5}
layer_rounds preload_checkpoint "${ranks}" "${rounds}" dat "${n}" "${reps}"
cmp "${scratch}/mpich.dat" "${scratch}/flowio.dat"
echo "ranks=${ranks} n=${n} MiB=$((n * n * n * 8 / 1048576)) rounds=${rounds} files=identical"
for direction in write read; do
  mpich=$(field "${direction}_MiBps" <"${scratch}/mpich.txt" | median)
  flowio=$(field "${direction}_MiBps" <"${scratch}/flowio.txt" | median)
  echo "${direction}: mpich_MiBps=${mpich} flowio_MiBps=${flowio} ratio=$(awk "BEGIN {printf \"%.2f\", ${flowio} / ${mpich}}")"
done
