#!/bin/bash
# The main job: sets everything up (packages, build) and runs the example
# on 4 ranks. Usage: tools/run_example.sh [output-file]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_packages.sh
bazel build //examples:noncontiguous_write
mpiexec -n 4 bazel-bin/examples/noncontiguous_write "${1:-flowio_example.dat}"
