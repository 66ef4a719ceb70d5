#!/bin/bash
# The benchmark page in one command: builds the benchmarks, runs each side
# by side with MPICH's MPI-IO into bench/results/NAME.txt, draws the plots
# (bench/results/*.png) and writes bench/README.md from
# bench/README.template.md (bench/run_all.py has the list of benchmarks,
# their settings and how each becomes a line of the table). From anywhere:
#
#   bench/run_all.sh            every benchmark at its standard settings
#                               (tens of minutes on 2 quiet cores)
#   bench/run_all.sh --quick    the same with few repetitions and small
#                               sizes, to check that everything runs
#   bench/run_all.sh --only ncio_2ranks,hpio    these again, the others kept
#   bench/run_all.sh --page-only                the page from bench/results
#
# Run it on a quiet machine: the figures are only as good as the machine
# was idle (each results file records its load average).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_packages.sh
bazel build //bench/... //examples:insitu //api/mpiio:libflowio_mpiio.so
# Debian's interpreter: python3-matplotlib installs for it, not for another python3 on PATH.
exec /usr/bin/python3 bench/run_all.py "$@"
