#!/usr/bin/env bash
# Issue 40: the whole-store reads past 100,000 runs (bench/RESULTS.md,
# "Issue 40"): wall time, CPU and peak memory of `ls`, `stats --all` and
# `inbox` over RUNS small runs (default 300,000 x 2 KB, one in ten waiting
# on a person), on four stores side by side:
#   file-o    the file backend, ids in creation order (bench-NNNNNN)
#   file-h    the file backend, hashed ids (gen_store.py --ids hashed)
#   js-ord    a stream the ordered store was migrated into (run after run)
#   js-shuf   a stream the hashed store was written into interleaved, runs
#             started in a shuffled order, 1,000 written at once
#             (examples/bench_interleave.rs)
#
#   bench/fleet_scale.sh [WORKDIR] [RUNS] [ROUNDS]
#
# Env: B0=another fisk-admin binary measured in the same rounds (before and
# after on the same stores); SIDES (default "file-o file-h js-ord js-shuf");
# CMDS (default: the three commands); BYTES (2000), EVERY (10); WARM=all
# (each command run once on each stream before the rounds, not only `ls`).
# The stores are kept in WORKDIR and reused: the file stores (about 2.4 GB
# at 300,000 runs), and the streams in a nats-server store of their own
# (WORKDIR/js<RUNS>), which this script starts on a free port and stops on
# exit. Building them at 300,000 runs takes several minutes each.
# Prints, per round, command and side: wall s, client user+sys s, peak KB,
# nats-server CPU s (utime+stime from /proc), and for each per run (us).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-scale}
N=${2:-300000}
ROUNDS=${3:-2}
BYTES=${BYTES:-2000}
EVERY=${EVERY:-10}
SIDES=${SIDES:-file-o file-h js-ord js-shuf}
mkdir -p "$W"
# NO_BUILD=1: measure the binaries given (B, B0) as they are.
[ -n "${NO_BUILD:-}" ] || cargo build --release --locked -q --bin fisk-admin --example bench_interleave
T=${CARGO_TARGET_DIR:-$PWD/target}/release
B=${B:-$T/fisk-admin}
O="$W/o$N"
H="$W/h$N"
gen() { # gen DIR ARGS...: a store, made once
  [ -f "$1/.done" ] && return
  rm -rf "$1"
  python3 bench/gen_store.py "$1" --runs "$N" --bytes "$BYTES" --waiting-every "$EVERY" "${@:2}"
  touch "$1/.done"
}
gen "$O"
gen "$H" --ids hashed
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
JS="$W/js$N"
mkdir -p "$JS"
nats-server -a 127.0.0.1 -p "$PORT" -js -sd "$JS" >"$W/nats$N.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do nc -z 127.0.0.1 "$PORT" 2>/dev/null && break; sleep 0.1; done
export NATS_URL="nats://127.0.0.1:$PORT"
echo "nats-server $(nats-server --version 2>&1 | head -1), $(nproc) cores, $N runs x $BYTES B, one in $EVERY waits"
if [ ! -f "$JS/.ord.done" ]; then
  "$B" stream create ORD --subject 'ord.>' >/dev/null
  /usr/bin/time -f "migrate $N runs into ORD: %e s" \
    "$B" migrate --from "file:$O" --to jetstream:ORD --all --quiet >/dev/null
  touch "$JS/.ord.done"
fi
if [ ! -f "$JS/.shuf.done" ]; then
  "$B" stream create SHUF --subject 'shuf.>' >/dev/null
  "$T/examples/bench_interleave" "$H" SHUF shuf 1000
  touch "$JS/.shuf.done"
fi
cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$PID/stat"; }
CMDS_DEFAULT=("ls --format json" "stats --all --format json" "inbox --format json")
if [ -n "${CMDS:-}" ]; then IFS=';' read -r -a COMMANDS <<<"$CMDS"; else COMMANDS=("${CMDS_DEFAULT[@]}"); fi
# One warm-up listing of each stream: the first listings after a server
# starts cost it about twice what later ones do (bench/RESULTS.md, issue 28).
# WARM=all: each command once on each stream instead (the first `inbox`
# after a server starts also loads what a listing does not).
if [ "${WARM:-}" = all ]; then WARMUP=("${COMMANDS[@]}"); else WARMUP=("ls --format json"); fi
for s in ORD SHUF; do
  for c in "${WARMUP[@]}"; do
    # shellcheck disable=SC2086
    "$B" --store "jetstream:$s" $c >/dev/null 2>&1 || true
  done
done
echo "round | command | side | binary | wall s | client CPU s | peak KB | server CPU s | us/run (wall) | us/run (client+server CPU)"
for round in $(seq "$ROUNDS"); do
  for c in "${COMMANDS[@]}"; do
    for side in $SIDES; do
      case $side in
        file-o) where=(--state-dir "$O") ;;
        file-h) where=(--state-dir "$H") ;;
        js-ord) where=(--store jetstream:ORD) ;;
        js-shuf) where=(--store jetstream:SHUF) ;;
      esac
      for bin in "$B" ${B0:+"$B0"}; do
        name=new
        [ "$bin" = "${B0:-}" ] && name=before
        c0=$(cpu)
        # shellcheck disable=SC2086
        rc=0
        /usr/bin/time -o "$W/time" -f "%e %U %S %M" "$bin" "${where[@]}" $c >/dev/null 2>"$W/err" || rc=$?
        c1=$(cpu)
        # A failed command: time's last line still holds the figures.
        read -r e u s m < <(tail -n 1 "$W/time")
        python3 -c "
e,u,s,m,c0,c1,n=$e,$u,$s,$m,$c0,$c1,$N
print(f'$round | $c | $side | $name | {e:.2f} | {u+s:.2f} | {m} | {c1-c0:.2f} | {e/n*1e6:.1f} | {(u+s+c1-c0)/n*1e6:.1f}')"
        if [ "$rc" != 0 ]; then echo "  (exit $rc: $(tail -c 300 "$W/err" | tr '\n' ' '))"; fi
      done
    done
  done
done
