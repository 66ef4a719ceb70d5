#!/bin/bash
# The main job: sets everything up (packages, build) and runs the in-situ
# demo (examples/insitu.cc) on as many ranks as the machine has cores, at
# least 2 and at most 4: more ranks than cores would leave flowio's threads
# no time but what they take from the ranks, whose every stencil sweep waits
# for the slowest one. Arguments go to the demo, e.g.
# tools/run_example.sh --mib=256 --steps=11 --trace=/tmp/insitu_trace.json
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_packages.sh
bazel build //examples:insitu
ranks=$(nproc)
ranks=$((ranks < 2 ? 2 : ranks > 4 ? 4 : ranks))
mpiexec -n "$ranks" bazel-bin/examples/insitu "$@"
