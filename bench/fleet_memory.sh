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
mkdir -p "$W"
cargo build --release --locked -q
B=${CARGO_TARGET_DIR:-$PWD/target}/release/fisk-admin
S="$W/ls$N"
[ -d "$S" ] || python3 bench/gen_store.py "$S" --runs "$N" --bytes 20000
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
JS=$(mktemp -d)
nats-server -a 127.0.0.1 -p "$PORT" -js -sd "$JS" >"$JS/log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; rm -rf "$JS"' EXIT
for _ in $(seq 50); do nc -z 127.0.0.1 "$PORT" 2>/dev/null && break; sleep 0.1; done
export NATS_URL="nats://127.0.0.1:$PORT"
"$B" stream create FLEET --subject 'fleet.>' >/dev/null
start=$(date +%s.%N)
"$B" migrate --from "file:$S" --to jetstream:FLEET --all --format json >/dev/null
end=$(date +%s.%N)
python3 -c "print(f'migrate $N runs into the stream: {($end-$start):.1f} s')"
cpu() { awk '{print ($14+$15)/100}' "/proc/$PID/stat"; }
for round in 1 2; do
  /usr/bin/time -f "round $round file ls, $N runs: %e s wall, %U+%S s CPU, %M KB peak" \
    "$B" --state-dir "$S" ls --format json >/dev/null
  before=$(cpu)
  /usr/bin/time -f "round $round jetstream ls, $N runs: %e s wall, %U+%S s CPU, %M KB peak" \
    "$B" --store jetstream:FLEET ls --format json >/dev/null
  echo "  nats-server CPU: $(python3 -c "print(f'{$(cpu)-$before:.2f}')") s"
done
