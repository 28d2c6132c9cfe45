#!/usr/bin/env bash
# Issue 28: what a three-server cluster (an R3 stream) costs against one
# server (an R1 stream), for migrate both ways and ls.
#
#   bench/cluster.sh BIN [RUNS] [WORKDIR]   # default 2000 runs, /tmp/fisk-cluster
#
# Needs python3, hyperfine and NATS_SERVER_BIN. Starts four nats-servers of
# its own on 127.0.0.1 (one alone, three clustered), each with a temporary
# store dir under WORKDIR, and stops them (by pid) at the end. Build BIN with
# `cargo build --release --locked`. Each migrate into a stream goes to a new
# stream (a re-run would find every run there); the best of two is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?binary} RUNS=${2:-2000} W=${3:-/tmp/fisk-cluster}
: "${NATS_SERVER_BIN:?set NATS_SERVER_BIN}"
mkdir -p "$W"
[ -d "$W/src-$RUNS" ] || python3 bench/gen_store.py "$W/src-$RUNS" --runs "$RUNS" --bytes 20000 >/dev/null
SRC=$W/src-$RUNS

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
start() { # start NAME PORT [ARGS...]
  local name=$1 port=$2
  shift 2
  rm -rf "$W/sd-$name"
  "$NATS_SERVER_BIN" -js -a 127.0.0.1 -p "$port" -sd "$W/sd-$name" --server_name "$name" "$@" \
    >"$W/$name.log" 2>&1 &
  pids+=($!)
}

single=$(free_port)
start single "$single"
c=() r=()
for i in 0 1 2; do c+=("$(free_port)"); r+=("$(free_port)"); done
routes=nats://127.0.0.1:${r[0]},nats://127.0.0.1:${r[1]},nats://127.0.0.1:${r[2]}
for i in 0 1 2; do
  start "n$i" "${c[$i]}" --cluster_name fisk --cluster "nats://127.0.0.1:${r[$i]}" --routes "$routes"
done
ONE=nats://127.0.0.1:$single
THREE=nats://127.0.0.1:${c[0]},nats://127.0.0.1:${c[1]},nats://127.0.0.1:${c[2]}
# Until the cluster's JetStream answers (a meta leader is elected).
for _ in $(seq 100); do
  "$BIN" --server "$THREE" stream create WARMUP --subject 'warmup.>' --replicas 3 >/dev/null 2>&1 && break
  sleep 0.3
done

timed() { # timed CMD...: its wall seconds (its output dropped)
  local t0 t1
  t0=$(python3 -c 'import time; print(time.time())')
  # A failed command gives no figure: its last lines, and the script stops.
  "$@" >"$W/last.out" 2>&1 || { tail -5 "$W/last.out" >&2; echo "failed: $*" >&2; return 1; }
  t1=$(python3 -c 'import time; print(time.time())')
  python3 -c "print($t1 - $t0)"
}
migrate_in() { # migrate_in SERVERS REPLICAS NAME: best wall seconds of two, into NAME1 and NAME2
  local t=()
  for k in 1 2; do
    "$BIN" --server "$1" stream create "$3$k" --subject "$3$k.>" --replicas "$2" >/dev/null
    t+=("$(timed "$BIN" --server "$1" migrate --from "file:$SRC" --to "jetstream:$3$k" --all)") || exit 1
  done
  python3 -c "print('%.2f' % min(${t[0]}, ${t[1]}))"
}
migrate_out() { # migrate_out SERVERS STREAM: best wall seconds of two, into a new directory
  local t=()
  for k in 1 2; do
    rm -rf "$W/out"
    t+=("$(timed "$BIN" --server "$1" migrate --from "jetstream:$2" --to "file:$W/out" --all)") || exit 1
  done
  python3 -c "print('%.2f' % min(${t[0]}, ${t[1]}))"
}
ls_ms() { # ls_ms SERVERS STREAM: hyperfine's median
  hyperfine -N --style none --warmup 1 --runs 5 --export-json "$W/ls.json" \
    "$BIN --server $1 --store jetstream:$2 --hold 0 ls --format json" >/dev/null
  python3 -c "import json; print('%.0f' % (json.load(open('$W/ls.json'))['results'][0]['median']*1000))"
}

records=$(cat "$SRC"/*.json | wc -l)
echo "$RUNS runs, $records records, $(du -sh "$SRC" | cut -f1) ($($NATS_SERVER_BIN --version))"
echo "| figure | one server, R1 | three servers, R3 | R3/R1 |"
echo "|---|---|---|---|"
m1=$(migrate_in "$ONE" 1 ONE) s1=ONE2 || exit 1
m3=$(migrate_in "$THREE" 3 THREE) s3=THREE2 || exit 1
echo "| migrate file -> stream (s) | $m1 | $m3 | $(python3 -c "print('%.1f' % ($m3/$m1))") |"
o1=$(migrate_out "$ONE" "$s1") || exit 1
o3=$(migrate_out "$THREE" "$s3") || exit 1
echo "| migrate stream -> file (s) | $o1 | $o3 | $(python3 -c "print('%.1f' % ($o3/$o1))") |"
l1=$(ls_ms "$ONE" "$s1")
l3=$(ls_ms "$THREE" "$s3")
echo "| ls --format json (ms) | $l1 | $l3 | $(python3 -c "print('%.1f' % ($l3/$l1))") |"
