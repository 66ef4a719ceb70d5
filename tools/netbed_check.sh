#!/bin/bash
# Checks tools/netbed.sh on this machine (as root): that each bed carries
# MPI traffic at no more than its rate, that ranks really are placed over
# the namespaces as it says, that the hosts share mounts under $TMPDIR,
# that two beds at once do not meet, and that nothing is left behind, also
# when the job is interrupted (SIGINT, SIGTERM). Prints one line per check
# and exits 1 if any failed.
#
#   tools/netbed_check.sh
#
# Bandwidths come from a 4 MiB ping-pong (tools/netbed_pingpong.c) between
# the first and the last rank, on the first and the last host: limited
# beds must not exceed their rate by more than 5% (tbf's burst), and must
# reach at least a third of it (the machine may be loaded).
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
leftovers() { ip netns list 2>/dev/null | grep -c '^flowio-nb-' || true; }

# bandwidth HOSTS RATE RANKS: MiB/s of the ping-pong in that bed.
bandwidth() {
  "$bed" --hosts "$1" --rate "$2" -- -n "$3" "$work/pingpong" 4194304 8 2>"$work/stderr" |
    sed -n 's/^MiBps=//p' || true
}
within() {  # within VALUE LOW HIGH
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'
}

before=$(leftovers)
for hosts in 1 2 4; do
  ranks=$((hosts > 2 ? hosts : 2))
  for rate in 1gbit 100mbit; do
    nominal=$([ "$rate" = 1gbit ] && echo 119.2 || echo 11.92)
    got=$(bandwidth "$hosts" "$rate" "$ranks")
    high=$(awk -v n="$nominal" 'BEGIN { print n * 1.05 }')
    low=$(awk -v n="$nominal" 'BEGIN { print n / 3 }')
    check "hosts=$hosts rate=$rate: ${got:-none} MiB/s within [$low, $high]" \
      within "$got" "$low" "$high"
  done
done
for hosts in 2 4; do
  got=$(bandwidth "$hosts" none "$hosts")
  check "hosts=$hosts rate=none: ${got:-none} MiB/s, above 1 Gbit/s" within "$got" 125 1000000
done

# where HOSTS RANKS [BED-OPTION...]: each rank prints its host's address;
# prints how many ranks each address had, host by host.
where() {
  local hosts=$1 ranks=$2
  shift 2
  "$bed" --hosts "$hosts" --rate none "$@" -- -n "$ranks" \
    sh -c 'echo "$(ip -br addr | grep -o "10\.77\.0\.[0-9]*")"' 2>/dev/null | sort | uniq -c | xargs || true
}
got=$(where 2 4)
check "hosts=2, 4 ranks: two in each namespace ($got)" test "$got" = "2 10.77.0.1 2 10.77.0.2"
got=$(where 2 4 --split 1)
check "hosts=2, 4 ranks, --split 1: one in a, three in b ($got)" \
  test "$got" = "1 10.77.0.1 3 10.77.0.2"
got=$(where 4 8)
check "hosts=4, 8 ranks: two in each namespace ($got)" \
  test "$got" = "2 10.77.0.1 2 10.77.0.2 2 10.77.0.3 2 10.77.0.4"
got=$(where 4 6)
check "hosts=4, 6 ranks: 2, 2, 1, 1 ($got)" \
  test "$got" = "2 10.77.0.1 2 10.77.0.2 1 10.77.0.3 1 10.77.0.4"

# Two beds at once, with the same namespace suffixes, interface names and
# subnet: both carry their ping-pong across their own bridge.
bandwidth 4 none 4 >"$work/first" &
first=$!
second=$(bandwidth 4 none 4)
wait "$first"
check "two 4-host beds at once: both ping-pongs ran ($(cat "$work/first") and ${second:-none} MiB/s)" \
  test -s "$work/first" -a -n "$second"

# A tmpfs that rank 0 (host a) mounts under $TMPDIR is seen by the rank on
# host d, and by nothing outside the job, where it is gone with the job.
mkdir "$work/mount"
seen=0
"$bed" --hosts 4 --rate none -- -n 4 sh -c '
    if [ "$PMI_RANK" = 0 ]; then
      mount -t tmpfs -o size=1m tmpfs "$0" && touch "$0/mounted" && sleep 2 && exit 0
    elif [ "$PMI_RANK" = 3 ]; then
      for i in $(seq 50); do
        [ -e "$0/mounted" ] && mount | grep -q " $0 type tmpfs" && exit 0
        sleep 0.1
      done
      exit 1
    fi' "$work/mount" 2>/dev/null || seen=$?
check "hosts=4: a tmpfs rank 0 mounts under \$TMPDIR is seen on the last host (exit $seen)" \
  test "$seen" = 0
check "hosts=4: the tmpfs is not mounted outside the job" \
  test ! -e "$work/mount/mounted"
check "no namespace left after the runs" test "$(leftovers)" = "$before"

# interrupted SIGNAL HOSTS: starts a long job, signals the bed once the
# namespaces exist, and checks that the bed and its ranks are gone.
interrupted() {
  local signal=$1 hosts=$2 pid status=0
  set -m  # the bed in its own process group, where SIGINT is not ignored
  "$bed" --hosts "$hosts" --rate 100mbit -- -n "$((hosts > 2 ? hosts : 2))" "$work/pingpong" 4194304 1000 \
    >/dev/null 2>&1 &
  pid=$!
  set +m
  # A bed of several hosts has a namespace more: the switch's.
  local namespaces=$((hosts > 1 ? hosts + 1 : 1))
  for _ in $(seq 100); do
    [ "$(ip netns list 2>/dev/null | grep -c "^flowio-nb-$pid-")" -ge "$namespaces" ] && break
    sleep 0.1
  done
  sleep 2  # the ranks are running
  kill -s "$signal" "$pid"
  wait "$pid" || status=$?
  sleep 0.5
  check "SIG$signal to the bed (hosts=$hosts): exit $status, namespaces removed" \
    test "$(ip netns list 2>/dev/null | grep -c "^flowio-nb-$pid-")" = 0
  check "SIG$signal to the bed (hosts=$hosts): no rank left running" \
    test -z "$(pgrep -f "$work/pingpong" || true)"
}
interrupted INT 1
interrupted TERM 2
interrupted INT 4

[ "$failures" = 0 ] || { echo "$failures checks failed"; exit 1; }
echo "all checks passed"
