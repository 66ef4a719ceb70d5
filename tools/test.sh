#!/bin/bash
# The whole test suite: the layering check, every test, then the multi-rank
# and unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
# Ends with a line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_packages.sh || exit 1

log=$(mktemp)
status=0
tools/check_layering.sh || status=1
bazel test //... 2>&1 | tee "$log" || status=1
bazel test --config=asan //tests/... 2>&1 | tee -a "$log" || status=1

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS)' "$log")
rm -f "$log"
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "${passed} passed, ${failed} failed"
exit "$status"
