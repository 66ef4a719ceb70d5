#!/bin/bash
# Parallel HDF5 on flowio's MPI-IO layer: runs bench/hdf5_io (an HDF5
# program that knows nothing of flowio) alternately on MPICH's MPI-IO and
# with libflowio_mpiio.so preloaded, ROUNDS times each, checks that the
# layer served the calls (FLOWIO_MPIIO_REPORT=1) and that h5diff finds no
# difference between the two files, and prints the median seconds of each
# phase and their ratio (MPICH's time over flowio's: above 1, flowio is
# faster). From anywhere:
#
#   bench/hdf5.sh [ranks=2] [n=64] [chunk=16] [reps per run=3] [rounds=5]
source "$(dirname "$0")/layer_rounds.sh"
ranks=${1:-2}
n=${2:-64}
chunk=${3:-16}
reps=${4:-3}
rounds=${5:-5}
layer_rounds hdf5_io "${ranks}" "${rounds}" h5 "${n}" "${chunk}" "${reps}"
calls=$(sed -n 's/.*served \([0-9]*\) file calls.*/\1/p' "${scratch}/flowio.err" | sort -n | tail -1)
h5diff "${scratch}/mpich.h5" "${scratch}/flowio.h5"
echo "ranks=${ranks} n=${n} chunk=${chunk} reps=${reps} rounds=${rounds} h5diff=same" \
  "file_calls_per_rank_and_run=${calls}"
for phase in write read total; do
  mpich=$(field "${phase}_s" <"${scratch}/mpich.txt" | median)
  flowio=$(field "${phase}_s" <"${scratch}/flowio.txt" | median)
  echo "${phase}: mpich_s=${mpich} flowio_s=${flowio}" \
    "ratio=$(awk "BEGIN {printf \"%.2f\", ${mpich} / ${flowio}}")"
done
