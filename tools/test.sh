#!/bin/bash
# The whole test suite: the layering check, every test, then the multi-rank
# and unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the install check (tests/install/check_install.sh).
#
#   tools/test.sh           everything (what CI runs)
#   tools/test.sh --quick   for development: the plain (optimized) build
#                           and its tests on 1 and 2 ranks; no 4-rank
#                           variants (on 2 cores they take two thirds of
#                           the test time), no scale tier (tests tagged
#                           "scale": GiB-sized types, 8 and 16 ranks), no
#                           sanitizers, no layering or install check
#
# What it prints is for people: one heading per phase, Bazel's progress (a
# line every 30 s or so), compiler warnings and errors, each failed test
# with its log, the test cases that could not run on this machine, the
# time each phase took, the ten slowest tests, and one summary line:
#   "N passed, N failed, N skipped, N expected failures"
# A test counts as skipped when every test case in it was skipped (it
# printed "flowio-test: ALL SKIPPED", test_progress.h), not as passed; test
# cases skipped inside a passing test are listed above the summary. An
# expected failure is a test in a list of tests known to fail until the
# work they wait for lands (tests/support/expected_failure.sh). Bazel's
# complete output is kept in a log directory, named at the end when
# anything failed (and removed otherwise).
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *)
    echo "usage: $0 [--quick]" >&2
    exit 2
    ;;
esac
tools/install_packages.sh || exit 1

log_dir=$(mktemp -d "${TMPDIR:-/tmp}/flowio-test.XXXXXX")
results=$log_dir/results  # "STATUS //target" per test, every phase
skips=$log_dir/skips      # the skip marker lines of passing tests
timings=$log_dir/timings  # "SECONDS //target (phase)" per test that ran, every phase
phases=$log_dir/phases    # "SECONDS name" per phase
status=0

# phase NAME: a heading; the time since the previous heading goes to the
# previous phase.
phase_name=""
phase_start=$SECONDS
suite_start=$SECONDS
end_phase() {
  [ -n "$phase_name" ] && echo "$((SECONDS - phase_start)) $phase_name" >>"$phases"
  phase_start=$SECONDS
}
phase() {
  end_phase
  phase_name=$*
  echo
  echo "== $*"
}

minutes() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# Bazel's lines a person needs while it runs: progress, warnings, errors,
# failures with their logs. Left out: loading and analysis chatter, timing
# totals, and the per-test result list (summarized at the end).
show_for_people() {
  grep --line-buffered -vE \
    '^(Loading:|Analyzing:|INFO: (Analyzed|Found|Elapsed|Build option|Streaming|Invocation|Reading|[0-9]+ process)|INFO: Build completed|There were tests whose|Use the --test_verbose|Executed [0-9]+ out of|Target //|  bazel-bin/|//[^ ]+ +(\(cached\) )?PASSED|$)'
}

# run_tests NAME BAZEL_TEST_ARGS...: runs `bazel test` with its whole output
# in $log_dir/NAME.log, shows what show_for_people keeps, and appends each
# test's verdict to $results (a passing test whose log says it skipped
# everything counts as SKIPPED, an expected failure as XFAIL).
run_tests() {
  local name=$1
  shift
  local log=$log_dir/$name.log
  bazel test --show_progress_rate_limit=30 "$@" 2>&1 | tee "$log" | show_for_people
  local bazel_status=${PIPESTATUS[0]}
  [ "$bazel_status" -ne 0 ] && status=1
  # The test logs of this configuration (--config=... moves them).
  local configs=() argument
  for argument in "$@"; do
    [[ "$argument" == --config=* ]] && configs+=("$argument")
  done
  local testlogs target verdict test_log
  testlogs=$(bazel info ${configs[@]+"${configs[@]}"} bazel-testlogs 2>/dev/null | tail -n 1)
  # "//target PASSED in 12.3s": the time of each test that ran (cached
  # ones did not run in this invocation).
  sed -nE 's#^(//[^ ]+) +(PASSED|FAILED|TIMEOUT|FLAKY) in ([0-9.]+)s$#\3 \1 ('"$name"')#p' "$log" >>"$timings"
  grep -E '^//[^ ]+ +(\(cached\) )?(PASSED|FAILED|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE|FAILED TO BUILD)' "$log" |
    sed -E 's/ +\(cached\)//; s/ in [0-9.]+s$//' |
    while read -r target verdict; do
      test_log="$testlogs/$(echo "${target#//}" | tr ':' '/')/test.log"
      if [ "$verdict" = PASSED ] && [ -f "$test_log" ]; then
        if grep -q '^flowio-test: ALL SKIPPED' "$test_log"; then
          verdict=SKIPPED
        elif grep -q '^flowio-test: EXPECTED FAILURE' "$test_log"; then
          verdict=XFAIL
        fi
        grep -h '^flowio-test: SKIPPED' "$test_log" | sed "s|^|$target ($name): |" >>"$skips"
      fi
      echo "$verdict $target ($name)" >>"$results"
    done
  # A build failure leaves no per-test line for the tests it stopped.
  if [ "$bazel_status" -ne 0 ] && ! grep -qE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE|FAILED TO BUILD)' "$log"; then
    echo "FAILED (bazel test $*: see $log)" >>"$results"
  fi
}

if [ "$quick" -eq 0 ]; then
  phase "layering check"
  tools/check_layering.sh || status=1
fi

if [ "$quick" -eq 0 ]; then
  phase "build and run every test"
  run_tests plain //...
else
  phase "build and run the tests on 1 and 2 ranks, without the scale tier"
  run_tests plain --test_tag_filters=-ranks4,-scale //...
fi

if [ "$quick" -eq 0 ]; then
  # Tests of one process side by side (the unit tests and the multi-rank
  # tests' 1-rank variants); those of several processes one at a time:
  # sanitized multi-rank tests are ten times slower, and two of them side by
  # side oversubscribe the 2 cores several times over. Their 4-rank variants
  # run here only where a test asks (sanitized_ranks, tests/support/
  # mpi_test.bzl). Expected failures are left out: they wait out a deadline
  # to show a hang, which says nothing about memory errors.
  phase "the tests again under AddressSanitizer + UndefinedBehaviorSanitizer"
  run_tests asan --config=asan --test_tag_filters=-expected_failure,-not_sanitized,-ranks2,-ranks4 //tests/...
  run_tests asan-mpi --config=asan --local_test_jobs=1 --test_tag_filters=ranks2,ranks4,-expected_failure,-not_sanitized //tests/...

  # The install check runs outside Bazel (it installs, then builds with
  # mpicxx/mpicc as a user would); it counts as one test.
  phase "install check"
  if tests/install/check_install.sh >"$log_dir/install.log" 2>&1; then
    echo "PASSED //tests/install:check_install" >>"$results"
    tail -n 1 "$log_dir/install.log"
  else
    echo "FAILED //tests/install:check_install" >>"$results"
    cat "$log_dir/install.log"
    status=1
  fi
fi
end_phase

count() { grep -c "^$1 " "$results" 2>/dev/null || true; }
passed=$(count PASSED)
skipped=$(count SKIPPED)
expected=$(count XFAIL)
failed=$(grep -vcE '^(PASSED|SKIPPED|XFAIL) ' "$results" 2>/dev/null || true)
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1

echo
if [ "$failed" -ne 0 ]; then
  echo "Failed:"
  grep -vE '^(PASSED|SKIPPED|XFAIL) ' "$results" | sed 's/^/  /'
fi
if [ "$skipped" -ne 0 ]; then
  echo "Skipped (could not run on this machine):"
  grep '^SKIPPED ' "$results" | sed 's/^SKIPPED /  /'
fi
if [ -s "$skips" ]; then
  echo "Test cases skipped inside tests (could not run on this machine):"
  sort -u "$skips" | sed 's/^/  /'
fi
if [ "$expected" -ne 0 ]; then
  echo "Expected failures (tests/support/expected_failure.sh lists what they wait for):"
  grep '^XFAIL ' "$results" | sed 's/^XFAIL /  /'
fi
echo "Time by phase (total $(minutes $((SECONDS - suite_start)))):"
while read -r seconds name; do
  echo "  $(minutes "$seconds")  $name"
done <"$phases"
if [ -s "$timings" ]; then
  echo "The ten slowest tests:"
  sort -rn "$timings" | head -n 10 | while read -r seconds target; do
    printf '  %7.1fs  %s\n' "$seconds" "$target"
  done
fi
if [ "$status" -ne 0 ]; then
  echo "Complete logs: $log_dir"
else
  rm -rf "$log_dir"
fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped, ${expected} expected failures"
exit "$status"
