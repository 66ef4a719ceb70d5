#!/bin/bash
# Write-behind on an unmodified time-stepping program (bench/checkpoint_loop):
# runs it alternately on MPICH's MPI-IO, through flowio's preloaded layer,
# and through the layer with write-behind on (FLOWIO_WRITE_BEHIND), ROUNDS
# times each, and prints the medians of each side's time per step (compute
# + blocking write, close included) and of its write calls, and the
# fraction of the write time the write-behind side hid behind computation:
#   hidden = (step without - step with) / (step without - compute alone)
# (1: the writes cost the loop nothing; 0: no better than blocking). With
# DURABLE=1, flowio's sides write with the hint flowio_durable (each write
# on storage when it ends) and MPICH's calls MPI_File_sync after each write;
# with DIRECT=1, flowio's sides write with flowio_direct_io (O_DIRECT: the
# device's time, no copy into the page cache) and MPICH's as with DURABLE.
# From anywhere:
#
#   bench/write_behind.sh [ranks=2] [MiB per rank=32] [steps=16]
#                         [compute ms=50] [rounds=5]
source "$(dirname "$0")/layer_rounds.sh"
ranks=${1:-2}
mib=${2:-32}
steps=${3:-16}
compute_ms=${4:-50}
rounds=${5:-5}
durable=${DURABLE:-0}
direct=${DIRECT:-0}
budget=$((4 * mib * 1048576))
bazel build //bench:checkpoint_loop //api/mpiio:libflowio_mpiio.so >/dev/null 2>&1
bin=$(bazel info bazel-bin 2>/dev/null)
program=${bin}/bench/checkpoint_loop
layer=${bin}/api/mpiio/libflowio_mpiio.so
hints=${scratch}/hints
: >"${hints}"
mpich_sync=0
if [ "${durable}" = 1 ]; then
  echo "flowio_durable enable" >>"${hints}"
  mpich_sync=1
fi
if [ "${direct}" = 1 ]; then
  echo "flowio_direct_io enable" >>"${hints}"
  mpich_sync=1
fi
for _ in $(seq "${rounds}"); do
  mpiexec -n "${ranks}" "${program}" "${scratch}/mpich.dat" "${mib}" "${steps}" "${compute_ms}" \
    "${mpich_sync}" >>"${scratch}/mpich.txt"
  for side in flowio behind; do
    behind=0
    [ "${side}" = behind ] && behind=${budget}
    mpiexec -n "${ranks}" -genv LD_PRELOAD "${layer}" -genv FLOWIO_MPIIO_REPORT 1 \
      -genv FLOWIO_HINTS "${hints}" -genv FLOWIO_WRITE_BEHIND "${behind}" \
      "${program}" "${scratch}/${side}.dat" "${mib}" "${steps}" "${compute_ms}" 0 \
      >>"${scratch}/${side}.txt" 2>>"${scratch}/${side}.err"
  done
done
grep -q "flowio-mpiio: served [1-9]" "${scratch}/flowio.err" || {
  echo "the layer did not serve the calls" >&2
  exit 1
}
grep -q "writes behind [1-9]" "${scratch}/behind.err" || {
  echo "no write went behind" >&2
  exit 1
}
cmp "${scratch}/mpich.dat" "${scratch}/flowio.dat"
cmp "${scratch}/flowio.dat" "${scratch}/behind.dat"
echo "ranks=${ranks} MiB_per_rank=${mib} steps=${steps} compute_ms=${compute_ms} durable=${durable} direct=${direct}" \
  "rounds=${rounds} budget=${budget} files=identical"
for side in mpich flowio behind; do
  echo "${side}: compute_s=$(field compute_s <"${scratch}/${side}.txt" | median)" \
    "step_s=$(field step_s <"${scratch}/${side}.txt" | median)" \
    "write_call_s=$(field write_call_s <"${scratch}/${side}.txt" | median)" \
    "step_range=$(field step_s <"${scratch}/${side}.txt" | sort -g | sed -n '1p;$p' | paste -sd-)"
done
compute=$(field compute_s <"${scratch}/behind.txt" | median)
with=$(field step_s <"${scratch}/behind.txt" | median)
without=$(field step_s <"${scratch}/flowio.txt" | median)
mpich=$(field step_s <"${scratch}/mpich.txt" | median)
awk -v c="${compute}" -v w="${with}" -v o="${without}" -v m="${mpich}" 'BEGIN {
  printf "write_behind: hidden=%.2f write_s_without=%.4f step_ratio_vs_flowio=%.2f step_ratio_vs_mpich=%.2f\n",
    (o - w) / (o - c), o - c, o / w, m / w }'
