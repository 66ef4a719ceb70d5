#!/bin/bash
# Replays a fuzz target's corpus: run_corpus.sh FUZZER CORPUS_DIRECTORY.
# Every input must run without a finding (the driver aborts on one).
set -euo pipefail
exec "$1" "$2"
