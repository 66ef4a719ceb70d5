#!/bin/bash
# Checks tools/netbed.sh on this machine (as root): that each bed carries
# MPI traffic at no more than its rate, that ranks really are split over
# the two namespaces, and that nothing is left behind, also when the job
# is interrupted (SIGINT, SIGTERM). Prints one line per check and exits 1
# if any failed.
#
#   tools/netbed_check.sh
#
# Bandwidths come from a 4 MiB ping-pong (tools/netbed_pingpong.c) between
# the first and the last rank: limited beds must not exceed their rate by
# more than 5% (tbf's burst), and must reach at least a third of it (the
# machine may be loaded).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
here=$(dirname "$(realpath "$0")")
bed="$here/netbed.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/netbed_check.XXXXXX")
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/pingpong" "$here/netbed_pingpong.c"
failures=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}
leftovers() { ip netns list | grep -c '^flowio-nb-' || true; }

# bandwidth HOSTS RATE RANKS: MiB/s of the ping-pong in that bed.
bandwidth() {
  "$bed" --hosts "$1" --rate "$2" -- -n "$3" "$work/pingpong" 4194304 8 2>"$work/stderr" |
    sed -n 's/^MiBps=//p'
}
within() {  # within VALUE LOW HIGH
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'
}

before=$(leftovers)
for hosts in 1 2; do
  for rate in 1gbit 100mbit; do
    nominal=$([ "$rate" = 1gbit ] && echo 119.2 || echo 11.92)
    got=$(bandwidth "$hosts" "$rate" 2)
    high=$(awk -v n="$nominal" 'BEGIN { print n * 1.05 }')
    low=$(awk -v n="$nominal" 'BEGIN { print n / 3 }')
    check "hosts=$hosts rate=$rate: ${got:-none} MiB/s within [$low, $high]" \
      within "$got" "$low" "$high"
  done
done
got=$(bandwidth 2 none 2)
check "hosts=2 rate=none: ${got:-none} MiB/s, above 1 Gbit/s" within "$got" 125 1000000

# Where the ranks run: each prints its network namespace's interfaces.
"$bed" --hosts 2 --rate none -- -n 4 sh -c 'echo "$(ip -br addr | grep -o "10.77.0.[12]")"' \
  >"$work/where" 2>/dev/null
check "hosts=2, 4 ranks: two in each namespace ($(sort "$work/where" | uniq -c | xargs))" \
  test "$(sort "$work/where" | uniq -c | xargs)" = "2 10.77.0.1 2 10.77.0.2"
check "no namespace left after the runs" test "$(leftovers)" = "$before"

# interrupted SIGNAL HOSTS: starts a long job, signals the bed once the
# namespaces exist, and checks that the bed and its ranks are gone.
interrupted() {
  local signal=$1 hosts=$2 pid status=0
  set -m  # the bed in its own process group, where SIGINT is not ignored
  "$bed" --hosts "$hosts" --rate 100mbit -- -n 2 "$work/pingpong" 4194304 1000 \
    >/dev/null 2>&1 &
  pid=$!
  set +m
  for _ in $(seq 100); do
    [ "$(ip netns list | grep -c "^flowio-nb-$pid-")" -ge "$hosts" ] && break
    sleep 0.1
  done
  sleep 2  # the ranks are running
  kill -s "$signal" "$pid"
  wait "$pid" || status=$?
  sleep 0.5
  check "SIG$signal to the bed (hosts=$hosts): exit $status, namespaces removed" \
    test "$(ip netns list | grep -c "^flowio-nb-$pid-")" = 0
  check "SIG$signal to the bed (hosts=$hosts): no rank left running" \
    test -z "$(pgrep -f "$work/pingpong" || true)"
}
interrupted INT 1
interrupted TERM 2

[ "$failures" = 0 ] || { echo "$failures checks failed"; exit 1; }
echo "all checks passed"
