#!/bin/bash
# Runs bench/ncio's three standard sweeps (regions, size, spacing; all four
# cases; write then read; sync after each write, as the NCIO study did) on
# 2 and 4 ranks into bench/results/ncio_<sweep>_<N>ranks.txt, then plots
# them into bench/results/*.png with bench/plot.py. From anywhere:
#
#   bench/run_all.sh [more ncio options, e.g. --reps=3 or --sync=0]
#
# Options given here come after the script's own, so they win. Every point
# runs both implementations --reps times: expect tens of minutes, more on 4
# ranks over 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //bench:ncio
mkdir -p bench/results
for ranks in 2 4; do
  for sweep in regions size spacing; do
    out="bench/results/ncio_${sweep}_${ranks}ranks.txt"
    echo "ncio --sweep=${sweep} on ${ranks} ranks -> ${out}"
    mpiexec -n "${ranks}" bazel-bin/bench/ncio --sweep="${sweep}" --sync=1 "$@" >"${out}"
  done
done
# Debian's interpreter: python3-matplotlib installs for it, not for another python3 on PATH.
/usr/bin/python3 bench/plot.py --out bench/results bench/results/ncio_*.txt
