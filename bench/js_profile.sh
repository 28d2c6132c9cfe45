#!/usr/bin/env bash
# Issue 40, item 3: a CPU profile of nats-server (its profiling port)
# during one `ls --format json` of a bench stream, the top frames printed
# by bench/pprof_top.py (no go tool needed).
#
#   bench/js_profile.sh STORE_DIR STREAM [FISK_ADMIN]
#
# STORE_DIR: a nats-server store bench/fleet_scale.sh made (WORKDIR/jsN).
# One warm-up listing first (bench/RESULTS.md, issue 28).
set -euo pipefail
cd "$(dirname "$0")/.."
SD=$1
STREAM=$2
B=${3:-target/release/fisk-admin}
W=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
P=$(free_port)
Q=$(free_port)
nats-server -a 127.0.0.1 -p "$P" --profile "$Q" -js -sd "$SD" >"$W/nats.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 600); do grep -q "Server is ready" "$W/nats.log" && break; sleep 0.2; done
export NATS_URL=nats://127.0.0.1:$P
"$B" --store "jetstream:$STREAM" ls --format json >/dev/null 2>&1 || true
curl -s "http://127.0.0.1:$Q/debug/pprof/profile?seconds=${SECONDS_PROFILED:-45}" -o "$W/cpu.pprof" &
C=$!
/usr/bin/time -f "ls: %e s wall, %U+%S s client CPU" "$B" --store "jetstream:$STREAM" ls --format json >/dev/null
wait $C
echo "profile: $W/cpu.pprof"
python3 bench/pprof_top.py "$W/cpu.pprof"
