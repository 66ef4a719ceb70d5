#!/bin/bash
# A slow network made of real parts: runs an MPI job with its traffic over
# TCP through Linux network namespaces, the link rate limited by tc, and
# removes everything it made when the job ends, fails or is interrupted.
#
#   tools/netbed.sh [--rate RATE] [--hosts 1|2] [--split K] -- -n N [-genv NAME VALUE]... PROGRAM [ARGS...]
#
# --hosts 1 (default): one namespace; the ranks talk TCP over its loopback,
#   whose qdisc (tc tbf) limits everything they send to RATE in total.
# --hosts 2: two namespaces, "hosts" a and b, joined by a veth pair
#   (10.77.0.1 and 10.77.0.2) limited to RATE in each direction; ranks
#   [0, K) run in a, the others in b (K = --split, default half rounded
#   up), launched by one mpiexec (MPMD, `-n K ... : -n N-K ...`): the
#   process manager's connection to each rank is an inherited descriptor,
#   so it crosses namespaces, while MPI traffic between the hosts can only
#   take the veth. Ranks on one host talk TCP over that host's loopback
#   (not limited). The hosts share the file system, as a cluster shares a
#   parallel one: $TMPDIR (or /tmp) is made a shared mount for the job, so
#   that a file system one rank mounts under it is seen by every rank.
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
# Needs root (ip netns, tc). Namespaces are named flowio-nb-<pid>-<host>;
# ones left by a run that was killed outright (SIGKILL, no cleanup) are
# removed by the next run. Exit status: the job's, or 2 for a usage error,
# 3 when the bed cannot be made.
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
case "$hosts" in 1|2) ;; *) echo "netbed: --hosts must be 1 or 2" >&2; exit 2 ;; esac

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
[ -n "$split" ] || split=$(((ranks + 1) / 2))
if [ "$hosts" = 2 ] && { [ "$split" -lt 0 ] || [ "$split" -gt "$ranks" ]; }; then
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
shared_mount=""
cleanup() {
  local ns
  for ns in "${made[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  made=()
  [ -z "$shared_mount" ] || umount -l "$shared_mount" 2>/dev/null || true
  shared_mount=""
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

# Namespaces of earlier runs whose script is gone.
for ns in $(ip netns list | awk '{print $1}' | grep '^flowio-nb-' || true); do
  owner=${ns#flowio-nb-}
  owner=${owner%%-*}
  if ! kill -0 "$owner" 2>/dev/null; then ip netns del "$ns" 2>/dev/null || true; fi
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

a="$prefix-a"
b="$prefix-b"
make_namespace "$a"
make_namespace "$b"
# Created inside the namespaces, so that the interface names never meet
# another run's in the root namespace.
ip link add va netns "$a" type veth peer name vb netns "$b" ||
  { echo "netbed: cannot create the veth pair" >&2; exit 3; }
ip -n "$a" addr add 10.77.0.1/24 dev va
ip -n "$b" addr add 10.77.0.2/24 dev vb
ip -n "$a" link set va up
ip -n "$b" link set vb up
limit "$a" va
limit "$b" vb
# A veth reports no carrier for a moment after both ends are up; UCX
# ignores an interface that is not running, so wait for both.
for end in "$a va" "$b vb"; do
  read -r ns dev <<<"$end"
  for _ in $(seq 100); do
    ip -n "$ns" -br link show dev "$dev" | grep -q ' UP ' && break
    sleep 0.05
  done
  ip -n "$ns" -br link show dev "$dev" | grep -q ' UP ' ||
    { echo "netbed: $dev in $ns did not come up" >&2; exit 3; }
done

echo "netbed: ranks 0..$((split - 1)) in $a (va 10.77.0.1), $split..$((ranks - 1)) in $b" \
  "(vb 10.77.0.2), TCP over the veth, rate $rate each way" >&2
# Each rank enters its host's network namespace and a mount namespace of
# its own in which /sys shows that network namespace's devices (UCX looks
# for them there), as `ip netns exec` does; unlike it, the rank keeps the
# file system the job shares: mounts under $TMPDIR (made a shared mount
# for the job, below) reach every host, as on a cluster-wide file system.
shared=$(realpath "${TMPDIR:-/tmp}")
mount --bind "$shared" "$shared" || { echo "netbed: cannot bind-mount $shared" >&2; exit 3; }
shared_mount=$shared
mount --make-shared "$shared" || { echo "netbed: cannot make $shared a shared mount" >&2; exit 3; }
enter=(nsenter --net=/run/netns/NS unshare --mount --propagation unchanged --
  sh -c 'mount --make-rprivate /sys && mount -t sysfs sysfs /sys && exec "$@"' rank)
# A host with no rank gets no part in the MPMD command line.
parts=()
if [ "$split" -gt 0 ]; then
  parts+=(-n "$split" "${enter[@]/NS/$a}" env UCX_NET_DEVICES=va "$@")
fi
if [ "$split" -lt "$ranks" ]; then
  [ ${#parts[@]} -gt 0 ] && parts+=(:)
  parts+=(-n "$((ranks - split))" "${enter[@]/NS/$b}" env UCX_NET_DEVICES=vb "$@")
fi
run_job mpiexec "${genv[@]}" "${parts[@]}" || status=$?
exit "$status"
