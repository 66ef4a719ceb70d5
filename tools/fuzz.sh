#!/bin/bash
# Fuzzes the libFuzzer targets of tests/fuzz, each for a bounded time:
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# (default 600 s each; targets: flatten access_codec hints). Not part of the
# test suite, which replays the corpora only (tests/fuzz:*_corpus_test).
#
# Builds with clang 16 and libFuzzer (installs clang-16 and
# libclang-rt-16-dev from Debian's archive when missing; clang 14 lacks
# std::source_location), under --config=fuzz, in its own Bazel output base
# so that the regular build is left alone. Each target starts from its
# corpus in the repository (tests/fuzz/corpus/TARGET) and writes what it
# discovers to a scratch corpus; a crash leaves crash-* files in the log
# directory and fails the script. With MERGE=1, the scratch inputs that add
# coverage are merged back into the repository corpus (keep it small).
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$PWD
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(flatten access_codec hints)

missing=()
for package in clang-16 libclang-rt-16-dev; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

output_base=${FLOWIO_FUZZ_OUTPUT_BASE:-$HOME/.cache/flowio-fuzz/$(echo "$PWD" | md5sum | cut -c1-12)}
bazel_fuzz() {
  CC=clang-16 CXX=clang++-16 bazel --output_base="$output_base" "$@"
}
labels=()
for target in "${targets[@]}"; do labels+=("//tests/fuzz:${target}_fuzzer"); done
bazel_fuzz build --config=fuzz --noshow_progress --symlink_prefix=/ "${labels[@]}"
bin=$(bazel_fuzz info --config=fuzz bazel-bin 2>/dev/null)

log_dir=$(mktemp -d "${TMPDIR:-/tmp}/flowio-fuzz.XXXXXX")
# MPICH's and UCX's own allocations at exit are not flowio's leaks.
export LSAN_OPTIONS="suppressions=$repository/tests/support/lsan_suppressions.txt:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for target in "${targets[@]}"; do
  scratch="$log_dir/corpus_$target"
  mkdir -p "$scratch"
  echo "== $target: ${seconds} s from tests/fuzz/corpus/$target"
  (cd "$log_dir" &&
    "$bin/tests/fuzz/${target}_fuzzer" -max_total_time="$seconds" -max_len=512 -timeout=10 \
      -rss_limit_mb=4096 -print_final_stats=1 "$scratch" "$repository/tests/fuzz/corpus/$target" \
      >"$log_dir/$target.log" 2>&1) || status=1
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)|SUMMARY|flowio fuzz finding' \
    "$log_dir/$target.log" || true
  if [ "${MERGE:-0}" = 1 ]; then
    "$bin/tests/fuzz/${target}_fuzzer" -merge=1 "$repository/tests/fuzz/corpus/$target" "$scratch" \
      >>"$log_dir/$target.log" 2>&1
  fi
done
# The fuzz build's Bazel server is not left running.
bazel_fuzz shutdown
if [ "$status" -ne 0 ]; then
  echo "A fuzzer found something: see $log_dir (crash-* files reproduce it)"
  exit 1
fi
echo "No finding; logs in $log_dir"
