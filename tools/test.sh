#!/bin/bash
# The whole test suite: the layering check, every test, then the multi-rank
# and unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the install check (tests/install/check_install.sh).
# Ends with a line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_packages.sh || exit 1

log=$(mktemp)
status=0
tools/check_layering.sh || status=1
bazel test //... 2>&1 | tee "$log" || status=1
# One test at a time: sanitized multi-rank tests are ten times slower, and
# two of them side by side oversubscribe the 2 cores several times over.
bazel test --config=asan --local_test_jobs=1 //tests/... 2>&1 | tee -a "$log" || status=1
# The install check runs outside Bazel (it installs, then builds with
# mpicxx/mpicc as a user would); its verdict joins the log in Bazel's
# format, so that it counts as one test below.
if tests/install/check_install.sh; then
  echo "//tests/install:check_install PASSED" | tee -a "$log"
else
  echo "//tests/install:check_install FAILED" | tee -a "$log"
  status=1
fi

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS)' "$log")
rm -f "$log"
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "${passed} passed, ${failed} failed"
exit "$status"
