#!/bin/bash
# A slow network made of real parts: runs an MPI job with its traffic over
# TCP through Linux network namespaces, the link rate limited by tc, and
# removes everything it made when the job ends, fails or is interrupted.
#
#   tools/netbed.sh [--rate RATE] [--hosts 1..4] [--split K] -- -n N [-genv NAME VALUE]... PROGRAM [ARGS...]
#
# --hosts 1 (default): one namespace; the ranks talk TCP over its loopback,
#   whose qdisc (tc tbf) limits everything they send to RATE in total.
# --hosts H, 2 to 4: H namespaces, "hosts" a, b, c, d, each with one veth
#   (va 10.77.0.1, vb 10.77.0.2, ...) whose other end is a port of one
#   Linux bridge, the switch, in a namespace of its own. Each host's link
#   is limited to RATE in each direction, as a NIC and its switch port
#   are: on the host's end for what it sends, on the switch's end for what
#   it receives (so the ranks of three hosts sending to a fourth share its
#   RATE). Ranks are placed in blocks, as a batch scheduler places them:
#   consecutive ranks on one host, the first N mod H hosts one rank more
#   than the others (8 ranks on 4 hosts: 0-1 on a, 2-3 on b, ...);
#   --split K (with --hosts 2 only) puts ranks [0, K) on a instead. One
#   mpiexec launches them (MPMD, `-n 2 ... : -n 2 ... : ...`): the process
#   manager's connection to each rank is an inherited descriptor, so it
#   crosses namespaces, while MPI traffic between the hosts can only take
#   the veths and the bridge. Ranks on one host talk TCP over that host's
#   loopback (not limited). The hosts share the file system, as a cluster
#   shares a parallel one: the job runs in a mount namespace of its own in
#   which $TMPDIR (or /tmp) is a shared mount, so that a file system one
#   rank mounts under it is seen by every rank (and by nothing outside the
#   job, and goes away with it).
# --rate: a tc rate ("1gbit", "100mbit", ...) or "none" (default 1gbit).
# After `--`: mpiexec's -n (or -np) and any -genv, then the program.
#
# MPI traffic goes over TCP because every rank gets UCX_TLS=tcp,self (no
# shared-memory transport) and UCX_NET_DEVICES naming its interface
# (without it UCX finds no TCP device inside a namespace and the job
# hangs). Files are on the one shared disk, as on a parallel file system.
# Every rank also preloads tools/ucx_finalize_guard.c (built here with cc,
# after any LD_PRELOAD given with -genv), which bounds a deadlock of
# MPICH 4.0.2's MPI_Finalize over UCX's TCP transport (explained there);
# ASAN_OPTIONS given with -genv get verify_asan_link_order=0, since for a
# sanitizer build with no other preload the guard precedes ASan's runtime.
#
# Needs root (ip netns, tc). Runs at once do not meet: namespaces are named
# flowio-nb-<pid>-<host> (and -switch), the interfaces are made inside
# them, and every bed's subnet is a network of its own behind its own
# bridge, so all can use 10.77.0.0/24. Namespaces left by a run that was
# killed outright (SIGKILL, no cleanup) are removed by the next run.
# Exit status: the job's, or 2 for a usage error, 3 when the bed cannot be
# made.
set -euo pipefail
# ip and tc live in /usr/sbin, which test runners leave out of PATH.
export PATH="$PATH:/usr/sbin:/sbin"

rate=1gbit
hosts=1
split=""
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate=${2:?}; shift 2 ;;
    --rate=*) rate=${1#*=}; shift ;;
    --hosts) hosts=${2:?}; shift 2 ;;
    --hosts=*) hosts=${1#*=}; shift ;;
    --split) split=${2:?}; shift 2 ;;
    --split=*) split=${1#*=}; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "netbed: unknown option $1" >&2; usage ;;
  esac
done
case "$hosts" in 1|2|3|4) ;; *) echo "netbed: --hosts must be 1 to 4" >&2; exit 2 ;; esac
if [ -n "$split" ] && [ "$hosts" != 2 ]; then
  echo "netbed: --split needs --hosts 2" >&2
  exit 2
fi

# The mpiexec arguments this script understands.
ranks=""
genv=()
preload=""
asan_options=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n|-np) ranks=${2:?}; shift 2 ;;
    -genv)
      case "${2:?}" in
        LD_PRELOAD) preload=${3?} ;;
        ASAN_OPTIONS) asan_options=${3?} ;;
        *) genv+=(-genv "$2" "${3?}") ;;
      esac
      shift 3 ;;
    -*) echo "netbed: mpiexec option $1 is not supported here" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ -z "$ranks" ] || [ $# -eq 0 ]; then
  echo "netbed: needs -n N and a program after --" >&2
  exit 2
fi
if [ -n "$split" ] && { [ "$split" -lt 0 ] || [ "$split" -gt "$ranks" ]; }; then
  echo "netbed: --split $split is not within 0..$ranks" >&2
  exit 2
fi

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "netbed: needs root and the ip and tc commands (iproute2)" >&2
  exit 3
fi

prefix="flowio-nb-$$"
made=()
scratch=""
cleanup() {
  local ns
  for ns in "${made[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  made=()
  [ -z "$scratch" ] || rm -rf "$scratch"
}
# The job runs in the background of this script (run_job), so that a
# signal reaches the trap at once: it stops the job (mpiexec passes the
# signal on to the ranks and reaps them), then exits through the EXIT
# trap, which removes the namespaces, with the conventional status.
child=""
on_signal() {
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP
run_job() {
  "$@" &
  child=$!
  local code=0
  wait "$child" || code=$?
  child=""
  return "$code"
}

# Namespaces of earlier runs whose script is gone; those named after this
# script's own pid belong to a killed run that had it before.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^flowio-nb-' || true); do
  owner=${ns#flowio-nb-}
  owner=${owner%%-*}
  if [ "$owner" = $$ ] || ! kill -0 "$owner" 2>/dev/null; then
    ip netns del "$ns" 2>/dev/null || true
  fi
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/netbed.XXXXXX")
guard="$scratch/ucx_finalize_guard.so"
"${CC:-cc}" -shared -fPIC -O2 -o "$guard" "$(dirname "$(realpath "$0")")/ucx_finalize_guard.c" -ldl ||
  { echo "netbed: cannot build the finalize guard" >&2; exit 3; }
genv+=(-genv UCX_TLS tcp,self -genv LD_PRELOAD "${preload:+$preload:}$guard")
if [ -n "$asan_options" ]; then
  genv+=(-genv ASAN_OPTIONS "$asan_options:verify_asan_link_order=0")
fi

make_namespace() {
  ip netns add "$1" || { echo "netbed: cannot create namespace $1" >&2; exit 3; }
  made+=("$1")
  ip -n "$1" link set lo up
}

# limit NAMESPACE DEVICE: a token bucket of RATE on the device's egress.
limit() {
  [ "$rate" = none ] && return 0
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst 1mbit latency 50ms ||
    { echo "netbed: tc cannot limit $2 to $rate" >&2; exit 3; }
}

status=0
if [ "$hosts" = 1 ]; then
  echo "netbed: $ranks ranks in namespace $prefix-a over TCP on its loopback, rate $rate" >&2
  ns="$prefix-a"
  make_namespace "$ns"
  limit "$ns" lo
  run_job ip netns exec "$ns" mpiexec -genv UCX_NET_DEVICES lo "${genv[@]}" -n "$ranks" "$@" ||
    status=$?
  exit "$status"
fi

switch="$prefix-switch"
make_namespace "$switch"
ip -n "$switch" link add bridge type bridge || { echo "netbed: cannot create the bridge" >&2; exit 3; }
ip -n "$switch" link set bridge up
names=(a b c d)
for ((host = 0; host < hosts; host++)); do
  name=${names[host]}
  make_namespace "$prefix-$name"
  # Made inside the namespaces, so that the interface names never meet
  # another run's in the root namespace.
  ip link add "v$name" netns "$prefix-$name" type veth peer name "port-$name" netns "$switch" ||
    { echo "netbed: cannot create the veth of host $name" >&2; exit 3; }
  # The bridge runs no spanning tree, so a port forwards as soon as it has
  # a carrier.
  ip -n "$switch" link set "port-$name" master bridge up
  ip -n "$prefix-$name" addr add "10.77.0.$((host + 1))/24" dev "v$name"
  ip -n "$prefix-$name" link set "v$name" up
  limit "$prefix-$name" "v$name"
  limit "$switch" "port-$name"
done
# A veth reports no carrier for a moment after both ends are up; UCX
# ignores an interface that is not running, so wait for every host's.
for ((host = 0; host < hosts; host++)); do
  name=${names[host]}
  for _ in $(seq 100); do
    ip -n "$prefix-$name" -br link show dev "v$name" | grep -q ' UP ' && break
    sleep 0.05
  done
  ip -n "$prefix-$name" -br link show dev "v$name" | grep -q ' UP ' ||
    { echo "netbed: v$name in $prefix-$name did not come up" >&2; exit 3; }
done

# Ranks per host, in blocks.
counts=()
for ((host = 0; host < hosts; host++)); do
  counts+=($((ranks / hosts + (host < ranks % hosts ? 1 : 0))))
done
[ -z "$split" ] || counts=("$split" $((ranks - split)))

# Each rank enters its host's network namespace and a mount namespace of
# its own in which /sys shows that network namespace's devices (UCX looks
# for them there), as `ip netns exec` does; unlike it, the rank keeps the
# mounts of the job's mount namespace (below), where $TMPDIR is shared.
enter=(nsenter --net=/run/netns/NS unshare --mount --propagation unchanged --
  sh -c 'mount --make-rprivate /sys && mount -t sysfs sysfs /sys && exec "$@"' rank)
# A host with no rank gets no part in the MPMD command line.
parts=()
placement=""
first=0
for ((host = 0; host < hosts; host++)); do
  name=${names[host]}
  [ "${counts[host]}" -gt 0 ] || continue
  [ ${#parts[@]} -eq 0 ] || parts+=(:)
  parts+=(-n "${counts[host]}" "${enter[@]/NS/$prefix-$name}" env "UCX_NET_DEVICES=v$name" "$@")
  last=$((first + counts[host] - 1))
  placement+="${placement:+, }$first$([ "$last" = "$first" ] || echo "..$last") on $name"
  placement+=" (v$name 10.77.0.$((host + 1)))"
  first=$((first + counts[host]))
done
echo "netbed: ranks $placement; hosts joined by a bridge in $switch, TCP, rate $rate each way per host" >&2
# The job's own mount namespace: binding $TMPDIR onto itself there and
# making it shared puts every rank's copy of it in one peer group, so that
# a mount one rank makes under it reaches the others; outside the job
# nothing changes, and runs at once cannot undo each other's mounts.
shared=$(realpath "${TMPDIR:-/tmp}")
run_job unshare --mount --propagation private -- sh -c \
  'mount --bind "$0" "$0" && mount --make-shared "$0" ||
     { echo "netbed: cannot make $0 a shared mount" >&2; exit 3; }
   exec "$@"' "$shared" mpiexec "${genv[@]}" "${parts[@]}" || status=$?
exit "$status"
