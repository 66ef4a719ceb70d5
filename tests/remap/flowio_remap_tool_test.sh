#!/bin/bash
# Remap.Tool.OfflineTranslation: tool_case writes an image (bands of rows,
# 4 ranks) and its tile readers' views; flowio_remap translates it on 3
# ranks (a translator need not match either side); the 4 readers check
# their tiles in the object file. Then bad arguments exit 2, a missing
# input exits 1, both without an object file.
# Usage: flowio_remap_tool_test.sh TOOL_CASE FLOWIO_REMAP
set -euo pipefail
tool_case=$(realpath "$1")
flowio_remap=$(realpath "$2")
# From the runfiles under Bazel, from the source tree otherwise.
source "$(dirname "$0")/../support/mpi_runner_setup.sh"
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/remap_tool.XXXXXX")
run() { "${mpi_launcher[@]}" -n "$1" "${env_args[@]}" "${@:2}"; }

run 4 "$tool_case" make "$dir"
run 3 "$flowio_remap" --input="$dir/input" --views="$dir/views" --output="$dir/output" \
  --window=8192 | tee "$dir/report"
grep -q "consumers=4 source_bytes=24000 " "$dir/report"
run 4 "$tool_case" check "$dir"

status=0
run 1 "$flowio_remap" --input="$dir/input" --views="$dir/views" 2> "$dir/usage" || status=$?
[ "$status" -eq 2 ] || { echo "missing --output: exit $status, expected 2"; exit 1; }
grep -q -- "--output is required" "$dir/usage"
status=0
run 2 "$flowio_remap" --input="$dir/absent" --views="$dir/views" --output="$dir/second" \
  2> "$dir/missing" || status=$?
[ "$status" -eq 1 ] || { echo "missing input: exit $status, expected 1"; exit 1; }
grep -q "absent" "$dir/missing"
[ ! -e "$dir/second" ] || { echo "an object file was made from a missing input"; exit 1; }
echo "flowio_remap tool test passed"
