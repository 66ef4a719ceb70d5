#!/bin/bash
# Runs a test that is known to fail today (tests/support/expected_failures.bzl):
#   expected_failure.sh "WHAT IT WAITS FOR" COMMAND [ARGS...]
# Passes when COMMAND fails, printing "flowio-test: EXPECTED FAILURE" (which
# tools/test.sh counts apart from passes) and COMMAND's output; fails when
# COMMAND passes, so that the entry gets removed from the list.
set -uo pipefail
reason=$1
shift
output=$(mktemp "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/expected_failure.XXXXXX")
"$@" >"$output" 2>&1
status=$?
if [ "$status" -eq 0 ]; then
  cat "$output"
  echo "flowio-test: UNEXPECTED PASS: this case passes now; remove it from"
  echo "tests/support/expected_failures.bzl (it was listed because it $reason)"
  rm -f "$output"
  exit 1
fi
echo "flowio-test: EXPECTED FAILURE (status $status): $reason"
echo "---- its output ----"
cat "$output"
rm -f "$output"
exit 0
