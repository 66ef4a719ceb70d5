#!/bin/bash
# Durability on RANKS ranks: durability_test.sh RANKS PROGRAM
# (PROGRAM is durability_program.cc).
#  1. Close without sync keeps every byte written: the program writes
#     through every route and closes without sync, also after a write that
#     failed half way (an injected fault); a new process reads the files
#     with POSIX calls and finds every byte reported written.
#  2. After sync returns, every rank that wrote a file has fsync'ed or
#     fdatasync'ed it after its last write: the program runs under strace
#     (POSIX backend, so that writes are system calls strace sees; pwrite*,
#     shared writable mappings), and each rank's trace is checked at the
#     marker the program writes when sync returned. Files are told apart by
#     path (strace -y): on Linux an fsync of any descriptor of a file
#     flushes the file, whichever descriptor wrote (the O_DIRECT one too).
#  Both steps run with write-behind off and on (every blocking collective
#  write returning once copied): sync and close keep the same promises, and
#  the failed write reports its failure at the write or, behind, at close.
# Skipped, with the skip marker tools/test.sh counts, where strace cannot
# run.
set -euo pipefail
ranks=$1
program=$(realpath "$2")
work=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/durability.XXXXXX")
# From the runfiles under Bazel, from the source tree otherwise.
source "$(dirname "$0")/../support/mpi_runner_setup.sh"
bazel_timeout=${TEST_TIMEOUT:-300}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-$((bazel_timeout * 40 / 100))}

# Each step runs twice: as the suite runs it, and with write-behind on for
# every file (FLOWIO_WRITE_BEHIND, a budget of 16 MiB): blocking collective
# writes then return once copied and end in the background, and close and
# sync must still keep every byte.
behind_budgets=(0 16777216)

for budget in "${behind_budgets[@]}"; do
  echo "== close without sync, then a new process reads (write-behind budget $budget)"
  mkdir -p "$work/no_sync.$budget"
  "${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} -genv FLOWIO_WRITE_BEHIND "$budget" \
    "$program" write "$work/no_sync.$budget"
  "$program" verify "$work/no_sync.$budget" "$ranks"
done

echo "== sync: fsync/fdatasync after every rank's last write, before sync returns"
if ! command -v strace >/dev/null || ! strace -qq -o /dev/null true 2>/dev/null; then
  echo "flowio-test: SKIPPED \"durability: fsync before sync returns\": strace cannot run here"
  exit 0
fi
failures=0
for budget in "${behind_budgets[@]}"; do
  echo "-- write-behind budget $budget"
  mkdir -p "$work/sync.$budget"
  # LeakSanitizer cannot run under ptrace: off for the traced run.
  # shellcheck disable=SC2016  # expanded by each rank's shell
  "${mpi_launcher[@]}" -n "$ranks" ${env_args[@]+"${env_args[@]}"} -genv FLOWIO_IO_BACKEND posix \
    -genv FLOWIO_WRITE_BEHIND "$budget" \
    sh -c 'ASAN_OPTIONS=detect_leaks=0 exec strace -f -y -qq -s 96 -o "$0.$PMI_RANK" \
      -e trace=pwrite64,pwritev,pwritev2,mmap,fsync,fdatasync,write "$@"' \
    "$work/trace.$budget" "$program" sync "$work/sync.$budget"
  for rank in $(seq 0 $((ranks - 1))); do
    trace="$work/trace.$budget.$rank"
    [ -f "$trace" ] || { echo "FAIL: no trace of rank $rank"; failures=$((failures + 1)); continue; }
    awk -v rank="$rank" '
      function path_after(name, line,   rest) {
        rest = substr(line, index(line, name "(") + length(name) + 1)
        if (match(rest, /^[0-9]+<[^>]*>/) == 0) return ""
        rest = substr(rest, RSTART, RLENGTH)
        sub(/^[0-9]+</, "", rest); sub(/>$/, "", rest)
        return rest
      }
      {
        for (i = 1; i <= 5; ++i) {
          name = i == 1 ? "pwrite64" : i == 2 ? "pwritev" : i == 3 ? "pwritev2" : i == 4 ? "fsync" : "fdatasync"
          if (index($0, " " name "(") == 0) continue
          p = path_after(name, $0)
          if (p == "") continue
          if (i <= 3) { wrote[p] = 1; synced[p] = 0; writes[p]++ }
          else if (p in wrote) synced[p] = 1
        }
        if (index($0, " mmap(") && index($0, "PROT_WRITE") && index($0, "MAP_SHARED") &&
            match($0, /, [0-9]+<[^>]*>/)) {
          p = substr($0, RSTART + 2, RLENGTH - 2); sub(/^[0-9]+</, "", p); sub(/>$/, "", p)
          wrote[p] = 1; synced[p] = 0; writes[p]++
        }
        if (match($0, /write\(-1, "flowio-sync-returned [^"]*"/)) {
          file = substr($0, RSTART + 32, RLENGTH - 33)
          found = 0
          for (p in wrote) {
            n = split(p, parts, "/")
            if (parts[n] != file) continue
            found = 1
            if (!synced[p]) { printf "FAIL: rank %d: sync of %s returned before an fsync after its last write\n", rank, file; bad++ }
            else printf "rank %d: %s: %d writes, fsync/fdatasync after the last one before sync returned\n", rank, file, writes[p]
          }
          if (!found) { printf "FAIL: rank %d: no write to %s seen\n", rank, file; bad++ }
          checked++
        }
      }
      END {
        if (checked == 0) { printf "FAIL: rank %d: no sync marker in the trace\n", rank; bad++ }
        exit bad > 0
      }' "$trace" || failures=$((failures + 1))
  done
done
if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures ranks' traces failed the check (traces in $work)"
  exit 1
fi
echo "PASS: durability on $ranks ranks"
