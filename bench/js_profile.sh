#!/usr/bin/env bash
# Issue 40, item 3: a CPU profile of nats-server (its profiling port)
# during one `ls --format json` of a bench stream, the top frames printed
# by bench/pprof_top.py (no go tool needed).
#
#   [CMD="inbox --format json"] [OUT=FILE] bench/js_profile.sh STORE_DIR STREAM [FISK_ADMIN]
#
# CMD: the command profiled (default `ls --format json`); OUT: where the
# profile is kept (for bench/pprof_diff.py).
# STORE_DIR: a nats-server store bench/fleet_scale.sh made (WORKDIR/jsN).
# One warm-up listing first (bench/RESULTS.md, issue 28).
set -euo pipefail
cd "$(dirname "$0")/.."
SD=$1
STREAM=$2
B=${3:-target/release/fisk-admin}
read -r -a CMD <<<"${CMD:-ls --format json}"
W=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
P=$(free_port)
Q=$(free_port)
nats-server -a 127.0.0.1 -p "$P" --profile "$Q" -js -sd "$SD" >"$W/nats.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 600); do grep -q "Server is ready" "$W/nats.log" && break; sleep 0.2; done
export NATS_URL=nats://127.0.0.1:$P
"$B" --store "jetstream:$STREAM" "${CMD[@]}" >/dev/null 2>&1 || true
curl -s "http://127.0.0.1:$Q/debug/pprof/profile?seconds=${SECONDS_PROFILED:-45}" -o "$W/cpu.pprof" &
C=$!
/usr/bin/time -f "${CMD[*]}: %e s wall, %U+%S s client CPU" "$B" --store "jetstream:$STREAM" "${CMD[@]}" >/dev/null
wait $C
if [ -n "${OUT:-}" ]; then cp "$W/cpu.pprof" "$OUT"; fi
echo "profile: ${OUT:-$W/cpu.pprof}"
python3 bench/pprof_top.py "$W/cpu.pprof"
