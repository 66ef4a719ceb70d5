#!/bin/bash
# Runs bench/compress on 4 ranks (and 2) over shared memory and over TCP links of
# 1 Gbit/s and 100 Mbit/s (tools/netbed.sh, one network namespace, needs
# root) into bench/results/compress_<link>.txt, the load sweep over
# 1 Gbit/s into bench/results/compress_loads_1gbit.txt, then plots them
# into bench/results/compress_*.png with bench/compress_plot.py. From
# anywhere:
#
#   bench/run_compress.sh [more compress options, e.g. --reps=3]
#
# Options given here come after the script's own, so they win.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //bench:compress
mkdir -p bench/results
# Each output starts with the machine's load average and the commit measured.
stamp() { echo "# $(date -u +%FT%TZ) at $(git rev-parse --short HEAD), load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
zeros_sweep=(--sweep=zeros --types=float --loads=500 --zeros=0,25,50,75,100)
# Over shared memory an exchange takes milliseconds, so the load of the
# machine swings it more: more repetitions there.
echo "bench/compress over shared memory -> bench/results/compress_shm.txt, compress_shm_2ranks.txt"
{ stamp; mpiexec -n 4 bazel-bin/bench/compress --link=shm "${zeros_sweep[@]}" --reps=15 "$@"; } \
  >bench/results/compress_shm.txt
{ stamp; mpiexec -n 2 bazel-bin/bench/compress --link=shm "${zeros_sweep[@]}" --reps=15 "$@"; } \
  >bench/results/compress_shm_2ranks.txt
for rate in 1gbit 100mbit; do
  echo "bench/compress over $rate -> bench/results/compress_$rate.txt"
  { stamp; tools/netbed.sh --rate "$rate" -- -n 4 bazel-bin/bench/compress --link="$rate" \
    "${zeros_sweep[@]}" "$@"; } >"bench/results/compress_$rate.txt"
done
echo "bench/compress load sweep over 1gbit -> bench/results/compress_loads_1gbit.txt"
{ stamp; tools/netbed.sh --rate 1gbit -- -n 4 bazel-bin/bench/compress --link=1gbit \
  --sweep=loads --types=int,float --loads=100,200,500,1000 --zeros=0,50,75 --total=0 "$@"; } \
  >bench/results/compress_loads_1gbit.txt
# Debian's interpreter: python3-matplotlib installs for it, not for another python3 on PATH.
/usr/bin/python3 bench/compress_plot.py --out bench/results bench/results/compress_*.txt
