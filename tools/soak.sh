#!/bin/bash
# The long runs left out of the suite:
#   tools/soak.sh [ROUNDS] [SEED]
#  - the soak test (tests/api/soak_test.cc) on 4 ranks: ROUNDS rounds
#    (default 10) of 64 nonblocking collective operations in flight, with
#    random sizes, views, memory types, hints and directions, verified byte
#    for byte, from SEED (default: from the clock, printed), once plain and
#    once under AddressSanitizer + UndefinedBehaviorSanitizer, whose
#    LeakSanitizer checks for leaks at exit;
#  - counts above 2^31 through the C++ API and the MPI-IO layer (2 GiB each
#    way; about 3 minutes on the 2-core machine).
# Prints Bazel's verdicts; exits nonzero if any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
seed=${2:-$(($(date +%s) % 100000))}
echo "soak: $rounds rounds on 4 ranks from seed $seed (replay: tools/soak.sh $rounds $seed)"
status=0
soak_env=(--test_env=FLOWIO_SOAK_ROUNDS="$rounds" --test_env=FLOWIO_SOAK_SEED="$seed"
  --nocache_test_results --test_output=errors)
bazel test "${soak_env[@]}" //tests/api:soak_test_4ranks 2>&1 | grep -E '^//|FAIL|ERROR' || true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
bazel test --config=asan "${soak_env[@]}" //tests/api:soak_test_4ranks 2>&1 |
  grep -E '^//|FAIL|ERROR|LeakSanitizer' || true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
bazel test --nocache_test_results --test_output=errors //tests/api:large_count_test_1ranks \
  //tests/mpiio:large_count_1ranks 2>&1 | grep -E '^//|FAIL|ERROR' || true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
[ "$status" -eq 0 ] && echo "soak: all passed" || echo "soak: FAILED"
exit "$status"
