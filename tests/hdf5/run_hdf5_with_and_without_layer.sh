#!/bin/bash
# Runs the parallel HDF5 program bench/hdf5_io on MPICH's MPI-IO and with
# flowio's MPI-IO layer preloaded, and fails unless both runs succeed (the
# program checks every value and attribute it reads back), the layer served
# the calls (FLOWIO_MPIIO_REPORT=1), and h5diff finds no difference between
# the two files. (The files are not compared byte for byte: HDF5 stores
# modification times in its object headers.)
#   run_hdf5_with_and_without_layer.sh RANKS PROGRAM LAYER_SO
set -euo pipefail
ranks=$1
program=$(realpath "$2")
layer=$(realpath "$3")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/hdf5.${ranks}.XXXXXX")

# From the runfiles under Bazel, from the source tree otherwise.
source "$(dirname "$0")/../support/mpi_runner_setup.sh"
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}

preload=$(layer_preload "$program" "$layer")

# A 32^3 grid in chunks of 8^3: 64 chunks per chunked dataset.
"${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} "$program" "$work/mpich.h5" 32 8 1 \
  >"$work/mpich.out"
"${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} -genv LD_PRELOAD "$preload" \
  -genv FLOWIO_MPIIO_REPORT 1 "$program" "$work/flowio.h5" 32 8 1 >"$work/flowio.out" \
  2>"$work/flowio.err"
cat "$work/mpich.out" "$work/flowio.out"
if ! grep -q "flowio-mpiio: served [1-9]" "$work/flowio.err"; then
  echo "FAIL: the layer did not serve the program"
  cat "$work/flowio.err"
  exit 1
fi
grep "flowio-mpiio: served" "$work/flowio.err" | head -n 1
if ! h5diff "$work/mpich.h5" "$work/flowio.h5"; then
  echo "FAIL: h5diff finds differences between the MPICH and the flowio files"
  exit 1
fi
echo "PASS: HDF5 on $ranks ranks, h5diff finds no difference"
rm -rf "$work"
