#!/usr/bin/env bash
# Issues 16 and 28: `ls` of RUNS runs (default 100,000 x 20 KB) on the file
# backend and on JetStream, wall time, peak memory and the cost split of
# each (this process's user+sys, nats-server's utime+stime, the messages
# the server took in and sent out, from its /varz), side by side
# (bench/RESULTS.md, "issue 16 on JetStream", "issue 28").
#   bench/fleet_memory.sh [WORKDIR] [RUNS] [ROUNDS]
# Like bench/fleet_js.sh: its own nats-server on a free port with a
# temporary store, the file store copied into a stream with `migrate`
# (about a minute per 100,000 runs). Needs about 3 GB of disk for each copy.
# With LIST_BENCH set to a built `examples/bench_js_list` binary, it then
# times each request kind a listing could be built from, over the stream.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
N=${2:-100000}
ROUNDS=${3:-2}
. bench/fleet_setup.sh
cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$PID/stat"; }
msgs() {
  curl -s "http://127.0.0.1:$MPORT/varz" |
    python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["in_msgs"], v["out_msgs"])'
}
for round in $(seq "$ROUNDS"); do
  /usr/bin/time -f "round $round file ls, $N runs: %e s wall, %U+%S s CPU, %M KB peak" \
    "$B" --state-dir "$S" ls --format json >/dev/null
  before=$(cpu); read -r i0 o0 < <(msgs)
  /usr/bin/time -f "round $round jetstream ls, $N runs: %e s wall, %U+%S s CPU, %M KB peak" \
    "$B" --store jetstream:FLEET ls --format json >/dev/null
  read -r i1 o1 < <(msgs)
  echo "  nats-server CPU: $(python3 -c "print(f'{$(cpu)-$before:.2f}')") s; requests in $((i1 - i0)), messages out $((o1 - o0))"
done
if [ -n "${LIST_BENCH:-}" ]; then
  "$LIST_BENCH" FLEET fleet "$PID"
fi
