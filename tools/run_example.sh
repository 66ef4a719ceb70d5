#!/bin/bash
# The main job: sets everything up (packages, build) and runs the in-situ
# demo (examples/insitu.cc) on 4 ranks. Arguments go to the demo, e.g.
# tools/run_example.sh --mib=256 --steps=8 --trace=/tmp/insitu_trace.json
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_packages.sh
bazel build //examples:insitu
mpiexec -n 4 bazel-bin/examples/insitu "$@"
