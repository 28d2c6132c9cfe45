#!/usr/bin/env bash
# Issue 40 item 3: hyperfine over the commands given, against the bench
# store of N runs made by bench/fleet_scale.sh in /tmp/scale (its streams
# ORD and SHUF), on a nats-server of its own; e.g.
#   bench/scale_readers.sh 30000 "env FISK_ADMIN_READERS=1 target/release/fisk-admin --store jetstream:SHUF ls --format json" "env FISK_ADMIN_READERS=2 ..."
set -euo pipefail
N=$1; shift
W=${W:-/tmp/scale}
P=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
nats-server -a 127.0.0.1 -p $P -js -sd $W/js$N > /tmp/readers-nats.log 2>&1 &
PID=$!
trap 'kill $PID; wait $PID || true' EXIT
for i in $(seq 600); do grep -q "Server is ready" /tmp/readers-nats.log && break; sleep 0.2; done
export NATS_URL=nats://127.0.0.1:$P
B=${B:-$(dirname "$0")/../target/release/fisk-admin}
for s in ORD SHUF; do $B --store jetstream:$s ls --format json >/dev/null; $B --store jetstream:$s ls --format json >/dev/null; done
hyperfine -N --warmup 1 --runs ${RUNS:-10} "$@" 2>&1 | grep -E "Benchmark|Time|±|faster|slower|^  " 
