#!/bin/bash
# Fails if a lower layer depends on a higher one. The order, lowest first:
#   core:     //runtime/core, //api:vocabulary (errors, futures)
#   services: //io, //exchange, //sync
#   runtime, in four steps:
#     below the stages: //runtime/plan (compiling a call), the engine's
#       threads, its lock port and the one owner of ordering
#       (//runtime/engine:threads, :lock_progress, :order)
#     the stages:       //runtime/stages
#     what runs them:   the rest of //runtime/engine (runners, executors,
#                       pipelines, the collective call)
#     on top:           //runtime (access gathers, object sets, remapping)
#   api:      //api (everything but :vocabulary)
# Each layer may depend on its own and lower layers only; services may not
# depend on each other. Asks Bazel for the real dependency graph (one
# query for the whole graph).
set -euo pipefail
cd "$(dirname "$0")/.."

layer_of() {
  case "$1" in
    //runtime/core*|//api:vocabulary) echo 0 ;;
    //io*|//exchange*|//sync*) echo 10 ;;
    //runtime/plan*|//runtime/engine:threads|//runtime/engine:lock_progress|//runtime/engine:order) echo 20 ;;
    //runtime/stages*) echo 21 ;;
    //runtime/engine*) echo 22 ;;
    //runtime*) echo 23 ;;
    //api*) echo 30 ;;
    *) echo -1 ;;
  esac
}

service_of() {
  case "$1" in
    //io*) echo io ;;
    //exchange*) echo exchange ;;
    //sync*) echo sync ;;
    *) echo "" ;;
  esac
}

# Only the folders that hold Bazel packages yet.
patterns=()
for folder in runtime io exchange sync api; do
  [ -f "$folder/BUILD" ] && patterns+=("//$folder/...")
done
universe=$(IFS=+; echo "${patterns[*]}")

# Every direct dependency edge between C++ libraries, in one query: the
# graph of the libraries in the universe and their direct dependencies,
# one "FROM TO" line per edge whose FROM is in the universe.
edges=$(bazel query --noshow_progress --output=graph --nograph:factored \
  "kind('cc_library', $universe + deps($universe, 1))" |
  sed -nE 's|^ *"(//[^"]+)" -> "([^"]+)"$|\1 \2|p')

failures=0
checked=0
while read -r target dependency; do
  from=$(layer_of "$target")
  [ "$from" -lt 0 ] && continue
  checked=$((checked + 1))
  to=$(layer_of "$dependency")
  [ "$to" -lt 0 ] && continue
  if [ "$to" -gt "$from" ]; then
    echo "layering: $target (layer $from) depends on higher layer $dependency (layer $to)" >&2
    failures=$((failures + 1))
  fi
  if [ "$from" -eq 10 ] && [ "$to" -eq 10 ] && [ "$(service_of "$target")" != "$(service_of "$dependency")" ]; then
    echo "layering: service $target depends on another service $dependency" >&2
    failures=$((failures + 1))
  fi
done <<<"$edges"
if [ "$failures" -gt 0 ]; then
  echo "layering: $failures violation(s)" >&2
  exit 1
fi
echo "layering: $checked dependency edges checked, no violations"
