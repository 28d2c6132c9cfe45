#!/usr/bin/env bash
# Issue 40 item 3: the whole-store reads on JetStream with their direct
# gets spread over 1 or 2 connections (FISK_ADMIN_READERS), against the
# file backend, on the same runs (bench/RESULTS.md, "Issue 40, the levers").
#   bench/fleet_readers.sh [WORKDIR] [RUNS] [HYPERFINE RUNS]
# Starts its own nats-server (as bench/fleet_js.sh) on the same cores.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
N=${2:-10000}
R=${3:-10}
. bench/fleet_setup.sh
"$B" --store jetstream:FLEET ls --format json >/dev/null
"$B" --store jetstream:FLEET ls --format json >/dev/null
for c in "ls --format json" "inbox --format json" "stats --all --format json"; do
  hyperfine -N --warmup 1 --runs "$R" \
    "$B --state-dir $S $c" \
    "env FISK_ADMIN_READERS=1 $B --store jetstream:FLEET $c" \
    "env FISK_ADMIN_READERS=2 $B --store jetstream:FLEET $c"
done
