#!/usr/bin/env bash
# Issue 16: `ls` of RUNS runs (default 100,000 x 20 KB) on the file backend
# and on JetStream, peak memory and wall time of one run each, side by side
# (bench/RESULTS.md, "issue 16 on JetStream").
#   bench/fleet_memory.sh [WORKDIR] [RUNS]
# Like bench/fleet_js.sh: its own nats-server on a free port with a
# temporary store, the file store copied into a stream with `migrate`
# (about a minute per 100,000 runs). Needs about 3 GB of disk for each copy.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
N=${2:-100000}
. bench/fleet_setup.sh
cpu() { awk '{print ($14+$15)/100}' "/proc/$PID/stat"; }
for round in 1 2; do
  /usr/bin/time -f "round $round file ls, $N runs: %e s wall, %U+%S s CPU, %M KB peak" \
    "$B" --state-dir "$S" ls --format json >/dev/null
  before=$(cpu)
  /usr/bin/time -f "round $round jetstream ls, $N runs: %e s wall, %U+%S s CPU, %M KB peak" \
    "$B" --store jetstream:FLEET ls --format json >/dev/null
  echo "  nats-server CPU: $(python3 -c "print(f'{$(cpu)-$before:.2f}')") s"
done
